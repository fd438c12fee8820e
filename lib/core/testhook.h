#ifndef KG_TESTHOOK_H
#define KG_TESTHOOK_H

/*
 * Test hooks: points where a test can stop a run at a known place instead
 * of racing a timer against it.
 *
 * kg_test_after_checkpoint() is called once a checkpoint has been renamed
 * into place.  When KG_TEST_KILL_AFTER_CKPT is "N" or "N:TERM" and this is
 * the process's N-th checkpoint (counting from 1), the process sends itself
 * SIGKILL (or SIGTERM, which runs the usual clean-up handler), as a user's
 * kill would.  Unset, malformed or another count: nothing happens.
 */
void kg_test_after_checkpoint(void);

#endif
