#!/bin/sh
# (being written)
