/*
 * fatal: what a tool cleans up when SIGINT, SIGTERM, SIGHUP or SIGPIPE
 * ends it (git's tempfile habit).
 *
 * Two tables, filled outside the handler: temporary paths to remove (the
 * output directories and files of lib/io/outdir.h) and child process
 * groups to stop (lib/attrs/attrs_text.h's --text-command child).  On a
 * fatal signal the handler stops every child group (SIGTERM, a bounded
 * wait, then SIGKILL), renames each temporary to a second name prepared
 * beforehand (so that a thread still writing into it fails instead of
 * racing the removal) and removes the tree, then dies of the signal.
 *
 * The handler is async-signal-safe: it calls kill, waitpid, nanosleep,
 * rename, openat, unlinkat, close and the bare getdents64 system call,
 * with fixed buffers on its stack; never malloc, stdio, opendir or
 * readdir.  A tree it cannot remove (deeper than KG_FATAL_MAX_DEPTH, or
 * on an error) stays under its hidden temporary name, and the next run
 * for the same output removes it (outdir.h: stale temporaries).
 *
 * fatal.c owns these signals: it is the one place that installs handlers
 * for them, and other modules that must clean up on them register here
 * (lib/report/render.c registers its temporary directory and gnuplot).
 *
 * Handlers are installed on the first registration, except for signals
 * that are ignored (nohup and friends keep them ignored), with every
 * signal blocked while one runs, so a second signal waits instead of
 * entering the handler again.  The thread that registers first (normally
 * main) owns the clean-up: a signal that lands on another thread is sent
 * on to it.  That thread blocks the fatal signals while it changes the
 * tables, and on the first registration the OpenMP workers block them
 * for good (threads that modules create, such as the store's I/O thread,
 * block them before they start: kg_fatal_block around pthread_create).
 *
 * The tables are small fixed arrays of slots that hold their own copy of
 * each path and are never freed; a slot's atomic state tells the handler
 * which it may read, and no slot is filled once a handler has begun, so
 * untracking or tracking at any moment, even beside a handler on another
 * thread, never hands the handler a freed or half-written path.
 * Registrations past the tables' size, and paths of 4096 bytes or more,
 * are not tracked.  Register and unregister from one thread at a time.
 */
#ifndef KG_FATAL_H
#define KG_FATAL_H

#include <signal.h>
#include <sys/types.h>

#define KG_FATAL_MAX_DEPTH 16

/*
 * Remove "path" (a file or a directory tree) if a fatal signal arrives.
 * The string is copied.  Registering the same path twice tracks it twice.
 */
void kg_fatal_track_path(const char *path);
/* Stop tracking "path" (compared as a string); a no-op if not tracked. */
void kg_fatal_untrack_path(const char *path);
/* How many times "path" is tracked now (for tests). */
int kg_fatal_tracked(const char *path);

/*
 * Stop the process group "pgid" (a child made the leader of its own
 * group) if a fatal signal arrives, and reap its leader.
 */
void kg_fatal_track_child(pid_t pgid);
void kg_fatal_untrack_child(pid_t pgid);

/*
 * Stop the process group whose leader is the child "pgid": SIGTERM to
 * the group, up to about two seconds for the leader to exit, then
 * SIGKILL; the leader is reaped.  Async-signal-safe; also for error
 * paths outside a handler.
 */
void kg_fatal_stop_child(pid_t pgid);

/*
 * A line the handler writes to stderr first, before it cleans up ("kg-train:
 * stopped during epoch 4; ..."), so that a run ended by a signal says
 * where it stood.  The text is copied (up to 1022 bytes; a newline is
 * added when it has none); NULL or "" removes it.  Installs the handlers
 * as a registration does; call it from the thread that registers.
 */
void kg_fatal_set_note(const char *text);

/*
 * Block the fatal signals in the calling thread (for a fork whose child
 * must be registered before a signal can come); *old receives the mask
 * that kg_fatal_unblock gives back.
 */
void kg_fatal_block(sigset_t *old);
void kg_fatal_unblock(const sigset_t *old);

/*
 * A mapped input (lib/io/tabread_map.c) faults with SIGBUS when its file
 * shrinks under the reader or the disk fails.  kg_fatal_watch_map
 * registers [addr, addr + len) as the mapping of the input "name": a
 * SIGBUS whose address falls in a registered range prints one line
 * naming it, runs the clean-up above and exits with status 1; any other
 * SIGBUS keeps its default action.  Up to KG_FATAL_MAX_MAPS ranges at
 * once (past that a range is not watched); a name of 1,000 bytes or more
 * is printed as "an input file".  kg_fatal_unwatch_map drops the range
 * at addr (a no-op if none).  From one thread at a time, like the tables.
 */
#define KG_FATAL_MAX_MAPS 8
void kg_fatal_watch_map(const void *addr, size_t len, const char *name);
void kg_fatal_unwatch_map(const void *addr);

/*
 * Remove a file or a directory tree without following symlinks, with
 * only system calls and stack buffers (what the handler uses).  0, or -1
 * when something was left.
 */
int kg_fatal_rmtree(const char *path);

#endif
