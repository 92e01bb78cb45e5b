/* groups.h — what fusion produces and every later pass reads: groups
 * (one kernel launch each), where each value lives, and the plan of a
 * kernel (doc/design.md, pipeline step 5).  fuse.c and stitch.c fill these;
 * schedule.c and the emitters read them.
 *
 * A group is one kernel launch.  It computes its roots and writes them to
 * memory; every other value it needs is either recomputed inside it (cheap
 * elementwise producers, broadcasts, constants) or read from memory (kernel
 * inputs, and "stored" values written by an earlier group).
 *
 * Everything lives in the compilation's arena. */
#ifndef TECC_GROUPS_H
#define TECC_GROUPS_H

#include "ir.h"

struct Stitch;         /* stitch.h */
struct GroupSchedule;  /* schedule.h */

typedef enum GroupKind {
  GROUP_LOOP,   /* elementwise over `domain` (the roots' shape) */
  GROUP_REDUCE, /* one reduction; `domain` is the shape of its argument */
  GROUP_STITCH  /* H9: reductions over one row space and the elementwise
                   values around them, rows kept on chip (stitch.h) */
} GroupKind;

/* Schedule classes (tile selection). */
typedef enum Schedule {
  SCHED_ELEMENTWISE, /* grid-stride loop over the domain */
  SCHED_ROW,         /* reduced axes include the innermost: threads along a row */
  SCHED_COLUMN       /* reduced axes are outer: threads along the kept axes */
} Schedule;

/* A generated kernel's parameter. */
typedef enum ParamKind {
  P_INPUT,       /* tensor input pointer (index) */
  P_SCALAR,      /* rank-0 input by value (index) */
  P_OUTPUT,      /* output pointer (index) */
  P_STORED_READ, /* a stored value read (value) */
  P_WS_WRITE,    /* workspace slot written (value) */
  P_SIZE,        /* size variable (index) */
  P_FASTDIV,     /* FastDiv of a size variable (index) */
  P_RCOUNT       /* a fused group's 1 / (its reduced count), computed by the
                    launching host code from its t_len (index 0: f32, 1: f64) */
} ParamKind;

typedef struct KParam {
  ParamKind kind;
  int index;    /* input, output or size index (stitch: the value id for values) */
  Value *value; /* P_STORED_READ, P_WS_WRITE */
  const char *name;
} KParam;

typedef struct Group {
  int id;
  GroupKind kind;
  Schedule sched;
  Shape domain;
  PtrVec roots;    /* Value*: what the group writes, increasing ids */
  Value *reduce;   /* GROUP_REDUCE: the reduction (the first root; the others round it) */
  PtrVec epilogue; /* Value*: GROUP_REDUCE over every axis: values of one element computed from
                      its result (and constants, scalars, earlier full reductions) that the
                      thread writing the result computes and writes too (s = max(abs(x)) / 448),
                      a loop group folded in (fuse.c, absorb_epilogues()), increasing ids */
  PtrVec members;  /* Value*: computed inside, increasing ids (dumps) */
  PtrVec reads;    /* Value*: read from memory (inputs, stored values) */
  PtrVec deps;     /* Group*: groups that write what this one reads */
  struct Stitch *stitch; /* GROUP_STITCH: its reductions and levels (stitch.h) */
  struct StitchPlan *plan; /* GROUP_STITCH: its kernels' passes, reads and parameters (stitch_plan.h) */
  struct GroupSchedule *schedule; /* tile selection's choice (schedule.h) */
} Group;

/* Where a value lives in memory, if anywhere. */
typedef enum HomeKind {
  HOME_NONE,      /* only in registers */
  HOME_INPUT,     /* a kernel input (index) */
  HOME_OUTPUT,    /* the buffer of output `index` */
  HOME_WORKSPACE  /* workspace slot `index` */
} HomeKind;

typedef struct Home {
  HomeKind kind;
  int index;
} Home;

typedef struct KernelPlan {
  Kernel *kernel;
  PtrVec groups;       /* Group*, in launch order */
  char *stored;        /* by value id: consumers outside its group read it from memory */
  Home *home;          /* by value id */
  int *group_of;       /* by value id: the group whose root it is, or -1 */
  PtrVec workspace;    /* Value*: the value of each workspace slot */
  int has_reduce;
  int in_place_ok;     /* no reduction: in place is possible (fuse_in_place_ok) */
  int sums_apart;      /* stitch fusion leaves the sums over a row stitch's rows in a column group of
                          their own (the plan of `apart`) */
  struct KernelPlan *apart; /* where a row stitch takes sums over its rows as column partials (a
                          norm's dw): the plan with those sums apart, a column group reading the
                          domain again, which the entry runs for rows longer than `apart_len`
                          (schedule.c, rows_apart()); its kernel is a copy named <kernel>_apart */
  int apart_split;     /* `apart` is the plan of the kernel with its reductions split (split.c), this
                          one of the kernel before (fuse.c, plan_unsplit()) */
  int apart_group;     /* the group (of this plan) whose row length decides */
  int64_t apart_len;   /* ... rows up to this long run this plan (0: until scheduled) */
} KernelPlan;

typedef struct FusionPlan {
  int opt_level;
  KernelPlan **kernels; /* parallel to Module.kernels */
  int nkernels;
  const char *explanation; /* --explain text */
} FusionPlan;

const char *group_kind_name(GroupKind k);
const char *schedule_name(Schedule s);
/* Axis `i` of `s` is the literal 1. */
int dim_is_one(const Shape *s, int i);
/* The last axis of `domain` that is not the literal 1, or -1. */
int innermost_axis(const Shape *domain);
/* Does a value of shape `s`, indexed at `map` (domain axis per axis of
 * `s`, -1 for none), vary along the reduced `axes` of the domain? */
int varies_along(const Shape *s, const int *map, uint32_t axes);
/* The non-1 axes of `s` at `map` are exactly the domain's non-1 axes (its
 * kept ones only, when `kept_only`), in order. */
int covers_domain(const Shape *domain, uint32_t axes, const Shape *s, const int *map, int kept_only);
/* The map of broadcast `v`'s argument, given v's `map`. */
void broadcast_arg_map(const Value *v, const int *map, int *arg_map);
/* Has a walk visited v at `map` before (`seen`: what it visited, each the
 * id and map of a value, allocated in `a`)?  If not, it is now. */
int seen_before(Arena *a, PtrVec *seen, const Value *v, const int *map);
/* "M*N": the product of `s`'s non-1 dims in `mask`, by name ("1": none). */
const char *dims_text(Arena *a, const Kernel *k, const Shape *s, uint32_t mask);
/* "4*M*N + 4*M": the bytes one launch of `g` moves, at least. */
const char *group_bytes(Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g);
/* The reduce group a loop group only rounds the result of (every root a
 * float cast of that group's reduction), or NULL: fusion lets the reduce
 * group store the casts itself. */
Group *rounded_reduce(const KernelPlan *kp, const Group *loop);
/* Does a group after g in the launch order read v?  A tensor that none
 * does is read for the last time in g, so g may stream it past L2. */
int read_by_later_group(const KernelPlan *kp, const Group *g, const Value *v);
/* ... one before g?  Then g may find what that group read last in L2. */
int read_by_earlier_group(const KernelPlan *kp, const Group *g, const Value *v);
/* g reduces every axis of its domain that is not a literal 1 (the full class). */
int reduces_fully(const Group *g);
/* The full reduce group a loop group of one element computes from (the
 * latest, where it reads several), or NULL where it reads anything else
 * (a tensor input, another group's value, a position): fusion folds the
 * loop into that group (Group.epilogue). */
Group *epilogue_host(Arena *a, const KernelPlan *kp, const Group *loop);

#endif
