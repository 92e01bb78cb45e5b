/* scanner.h — placeholder created by H3 so the tree builds; H1 owns and
 * replaces this file. */
