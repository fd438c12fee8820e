/*
 * manifest: the JSON manifest (jansson) that every output directory holds.
 *
 * {
 *   "format": "kgpipe", "format_version": 1,
 *   "tool": "kg-ingest", "tool_version": "0.1.0",
 *   "argv": [...], "created": "2026-11-22T00:00:00Z",
 *   "inputs": [ { "role": "dataset", "path": "...", "tool": "kg-ingest",
 *                 "checksum": "xxh3-64:<16 hex>" } ],
 *   "files": { "train.npy": { "dtype": "<i4", "shape": [n, 3],
 *                             "bytes": N, "checksum": "xxh3-64:..." },
 *              "entities.tsv": { "bytes": N, "checksum": "..." } },
 *   "config": { ... the stage's options ... },
 *   "figures": { ... counts, timings, stats ... }
 * }
 *
 * Checksums are XXH3-64 (libxxhash) over the whole file: several GB/s, so
 * verifying a large array is not the bottleneck.  Inputs are recorded by
 * the checksum of their manifest.json, which in turn covers their files.
 */
#ifndef KG_MANIFEST_H
#define KG_MANIFEST_H

#include <stdint.h>
#include <jansson.h>

#include "io/npy.h"

#define KG_FORMAT_VERSION 1
/* Returned (instead of -1) by loaders when the format version is unknown;
 * tools exit with KG_EXIT_VERSION (3). */
#define KG_ERR_VERSION (-3)

struct kg_manifest {
	json_t *root;	/* owned */
};

#define KG_MANIFEST_INIT { 0 }

/* Start a manifest for the running tool (kg_progname()) and its argv. */
void kg_manifest_init(struct kg_manifest *m, int argc, char *const argv[]);
void kg_manifest_release(struct kg_manifest *m);

/* Record an input directory: reads DIR/manifest.json, its tool and its
 * checksum.  0 or -1. */
int kg_manifest_add_input(struct kg_manifest *m, const char *role,
    const char *dir);

/* Record file "name" in "dir" (normally the outdir's temporary): bytes and
 * checksum, plus dtype and shape for .npy files.  0 or -1. */
int kg_manifest_add_file(struct kg_manifest *m, const char *dir,
    const char *name);

/*
 * Write the array dir/name (kg_npy_write; data may be NULL when the
 * array holds no element) and, unless m is NULL, record it in m as
 * kg_manifest_add_file does.  The one place a stage's .npy file is both
 * written and recorded.  0, or -1 after kg_error() (a file written but
 * not recorded stays, inside the caller's temporary directory).
 */
int kg_manifest_put_npy(struct kg_manifest *m, const char *dir,
    const char *name, enum kg_dtype dt, int ndim, const uint64_t *shape,
    const void *data);

/* Record every file of dir but manifest.json and names starting with a
 * dot, in name order.  0, or -1 after kg_error(). */
int kg_manifest_add_dir(struct kg_manifest *m, const char *dir);

/* Set key in "config" or "figures" (the reference to value is stolen). */
void kg_manifest_set_config(struct kg_manifest *m, const char *key,
    json_t *value);
void kg_manifest_set_figure(struct kg_manifest *m, const char *key,
    json_t *value);
/* kg_manifest_set_figure of an unsigned count. */
void kg_manifest_set_figure_u64(struct kg_manifest *m, const char *key,
    uint64_t v);
/* A new JSON array of the n counts x. */
json_t *kg_json_u64_array(const uint64_t *x, uint64_t n);

/* Write DIR/manifest.json (pretty, sorted keys, fsynced).  0 or -1. */
int kg_manifest_write(const struct kg_manifest *m, const char *dir);

/*
 * Read DIR/manifest.json.  tool, when not NULL, is the tool that must
 * have written it ("kg-ingest").  Returns 0, -1 after kg_error(), or
 * KG_ERR_VERSION when format_version is not KG_FORMAT_VERSION (the message
 * names both versions).
 */
int kg_manifest_load(struct kg_manifest *m, const char *dir,
    const char *tool);

/*
 * Check every recorded file of a loaded manifest against DIR: present,
 * same size, same dtype and shape for .npy; with "checksums" also the
 * XXH3 checksum.  0 or -1 naming the first mismatch.
 */
int kg_manifest_verify(const struct kg_manifest *m, const char *dir,
    int checksums);

/* Look up a dotted path ("figures.entities") in the manifest; NULL if
 * absent.  Borrowed reference. */
json_t *kg_manifest_get(const struct kg_manifest *m, const char *path);
/* The same, as an unsigned integer; 0 or -1 (absent or not an integer). */
int kg_manifest_get_u64(const struct kg_manifest *m, const char *path,
    uint64_t *out);

/* XXH3-64 of a whole file as "xxh3-64:<16 hex digits>" into out[32].
 * 0 or -1. */
int kg_checksum_file(const char *path, char out[32]);

#endif
