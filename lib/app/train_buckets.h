/*
 * train_buckets: kg-train's PyTorch-BigGraph-style partition bucket
 * run (application layer), in one process or on every rank under
 * mpirun, on top of lib/kge/engine.h (where the steps run),
 * lib/store/store.h (where the rows live) and lib/dist (the schedule,
 * the collectives and the exchanges between ranks,
 * dist/buckets_sync.h).
 *
 * Input: a dataset dir and a kg-partition output (P partitions, new IDs
 * contiguous per partition, P x P edge buckets).  Every rank loads the
 * same inputs (mapped, so only what it touches is read) and builds the
 * same schedule (kg_dist_sched_build, its partitions renamed by a
 * permutation drawn for each pass, kg_dist_sched_relabel, so that the
 * buckets' order changes from epoch to epoch); in each round a rank
 * holds at most two partitions' entity rows and Adagrad state and trains
 * its buckets with kg_trainer_bucket(), drawing negatives inside the
 * bucket's partitions.  With reciprocal relations bucket (a, b) also trains the
 * inverses of bucket (b, a)'s triples, which have heads in a and tails
 * in b.
 *
 * Partitions between rounds live in each rank's embedding store
 * (kg_store_open_park): a partition that its holder needs again stays
 * pinned in memory; one that another rank needs next is taken out of the
 * store and sent there with a point-to-point message; one that nobody
 * needs is unpinned, and the store "parks" it on the holder's local disk
 * (an unlinked file under TMPDIR, as PBG swaps to disk, gone however the
 * process ends) when it wants the memory, and reads it back when it is
 * needed again.  Parking on the last holder keeps every rank's memory at
 * its two working partitions (plus the ones in flight) whatever P is,
 * and needs no shared filesystem.  A partition is drawn by its first
 * holder from a random stream of (seed, partition), so the start does
 * not depend on the rank count.
 *
 * Relation parameters (and their optimiser state) are replicated: every
 * rank updates its copy, and the copies are merged (MPI_Allreduce) every
 * rel_sync steps (a step: one bucket of every rank; a round has one to
 * four) and at every epoch end: each row's change since the last merge,
 * summed over the ranks, divided by the number of ranks that changed the
 * row (rel_merge: KG_REL_MERGE_ROWS; MEAN divides by the rank count, SUM
 * by nothing), is added to the merged table (lib/dist/buckets_sync.c
 * says why).
 *
 * The negative pool (struct kg_neg_pool) is shared after every step of a
 * round and after the round:
 * each partition's rows from the rank that trained it, and the gradients
 * waiting for a partition, summed, to the rank that holds it next; at an
 * epoch's end the holders apply what still waits.
 *
 * With passes = K > 1 an epoch goes K times through the schedule (or
 * through K buffer orders), each pass training the K-th slice of every
 * bucket's shuffled positives: K times the partition moves for an
 * order closer to one process's, which converges faster per epoch.
 *
 * Epochs run in the epoch loop of the other trainers (lib/kge/epochs.h,
 * on every rank alike): the log (train_log.jsonl) gets one line per
 * bucket trained, {"epoch", "round", "rank", "bucket": [head part, tail
 * part], "triples", "loss"}, then the loop's line of the epoch with the
 * bytes sent added.  In one process the loop validates (the rows read
 * through the store, the triples in new IDs), keeps the best epoch through
 * the store's snapshot, and takes --patience, --target_mrr and
 * --max_step; under mpirun each rank holds only some partitions and
 * those are refused (--time_budget works: rank 0's epoch times decide).
 *
 * Checkpoints (every epoch end unless turned off) in the layout of
 * lib/io/ckpt.h, the single process's with more partitions:
 * relations.npy, relation_state.npy, state.json (epoch, step, shapes,
 * nparts, nranks, which rank wrote each partition, and the loop's state),
 * with a best epoch its parameters (best_part-NNN.npy,
 * best_relations.npy), train_log.jsonl and, from
 * each rank, entities-pN.npy and entity_state-pN.npy for the partitions
 * it holds or parks.  Rank 0 writes the shared files and renames the
 * directory into place after every rank is done, so the directory must be
 * on a filesystem all ranks see when they run on several machines.
 * --resume needs the same number of ranks and partitions.
 *
 * The model dir is the normal kg-train model dir (lib/kge/modeldir.h):
 * rank 0 collects the partitions one at a time and its table writer puts
 * each row at its ORIGINAL entity ID (the partition's new-to-old map), so
 * kg-eval and kg-partition-unaware readers need nothing else.
 *
 * With one rank (a plain process, or mpirun -np 1) the same code runs and
 * gives bit-identical output.
 *
 * Out of core (one process, buffer_capacity or mem_budget set;
 * lib/app/train_buckets_buffer.c): the partitions live in a partition buffer
 * (kg_store_open_buffer: files in swap_dir, at most C partitions in
 * memory plus one read ahead) and each epoch trains the buckets in the
 * order of lib/store/order.h, which starts from the partitions left in
 * memory by the epoch before.  Entering a buffer state pins its
 * partitions (the one it brings was read ahead), asks the store to read
 * the next state's partition on its thread, then trains the state's
 * buckets; partitions that leave are written back on that thread while
 * the next ones train.  Each epoch's log line adds the swaps, their lower
 * bound and the bytes read and written; checkpoints link the partition
 * files (lib/store/store.h), and the model's entities.npy is written
 * front to back in the original order.  With mem_budget, C is the number
 * of partitions (of the largest one's size, rows and Adagrad state) that
 * fit in it, less one for reading ahead.  With disk_f16 (CPU only) the
 * files keep the rows as binary16 (kg_store_open_buffer_as KG_DISK_F16)
 * and the config records "disk_dtype": "float16"; a resume with the other
 * type is refused.
 *
 * On a device (the job's device a GPU, or its seam set; one process):
 * the device trainer over a device tier of partitions
 * (lib/store/dev_tier.h) trains the buckets in the order of
 * lib/store/order.h for the device's capacity C (gpu_capacity, or the
 * partitions gpu_mem_budget holds less one to read ahead into), the
 * partitions coming from the store: every partition in memory, or with
 * buffer_capacity or mem_budget the buffer over swap_dir as above (disk
 * -> RAM -> GPU).  Negatives are drawn inside the corrupted partition
 * and from the negative pool (neg_pool), which the device keeps
 * (kg_engine_pool_load each epoch).  The relation table stays on the
 * device; both tables, and the pool's waiting gradients, come back to
 * the host at every epoch's end (checkpoints, the model dir).  The log's
 * and the figures' swaps are the device's.
 *
 * On devices under mpirun (each rank's GPU chosen by kg-train,
 * dist/gpus.h): the schedule, moves, merges and checkpoints above, each
 * bucket trained on the rank's device by the device engine (kge/engine.h; its
 * partitions and the relation table up and back per bucket), without the
 * negative pool and the device buffer's options.
 */
#ifndef KG_APP_TRAIN_BUCKETS_H
#define KG_APP_TRAIN_BUCKETS_H

#include "dist/dist_train.h"
#include "kge/train_job.h"

/*
 * The device's buffer capacity (kg_dev_tier_capacity, from gpu_capacity
 * and gpu_mem_budget) for the partitions x->partitions names and the
 * trainer's options o, read before any work (a command line's check).
 * 0, -1 after
 * kg_error() for a setting that cannot work, -2 after kg_error() when
 * the partitions cannot be read, or KG_ERR_VERSION.
 */
int kg_train_buckets_gpu_check(const struct kg_dist_train_opts *x,
    const struct kg_train_opts *o, uint32_t *capacity);

/*
 * Train as described above and write the model dir (rank 0).  Every rank
 * calls it with the same arguments.  0, -1 after kg_error() (the caller
 * should then kg_dist_abort() so no rank waits for it), or
 * KG_ERR_VERSION.
 */
int kg_train_buckets_run(struct kg_dist *d, const struct kg_train_opts *o,
    const struct kg_train_job *j, const struct kg_dist_train_opts *x);

#endif
