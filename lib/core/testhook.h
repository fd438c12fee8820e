#ifndef KG_TESTHOOK_H
#define KG_TESTHOOK_H

/*
 * Test hooks: points where a test can stop a run at a known place instead
 * of racing a timer against it.
 *
 * kg_test_after_checkpoint() is called once a checkpoint has been renamed
 * into place.  When KG_TEST_KILL_AFTER_CKPT is "N", "N:TERM" or "N:INT"
 * and this is the process's N-th checkpoint (counting from 1), the process
 * sends itself SIGKILL (or SIGTERM or SIGINT, which run the usual clean-up
 * handler), as a user's kill or Ctrl-C would.  Under MPI only the rank that commits (rank 0) calls it.
 * Unset, malformed or another count: nothing happens.
 */
void kg_test_after_checkpoint(void);

#endif
