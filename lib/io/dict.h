/*
 * dict: a string-to-ID dictionary for entity and relation names.
 *
 * IDs are dense uint32 values in order of first insertion (0, 1, 2, ...).
 * The layout is chosen for hundreds of millions of short names, looked up
 * at random:
 *   - records "uint32 id, name bytes, NUL" (4-byte aligned) live in an
 *     arena of fixed-size blocks that never move, so a name's address is
 *     stable until kg_dict_release; a record is named by a 32-bit
 *     reference (block number and offset in 4-byte units);
 *   - refs[id] is the reference of each ID's record (the offsets array,
 *     grown by half when full);
 *   - an open-addressing table (linear probing) of 64-bit slots, each a
 *     32-bit hash tag and a record reference (0 = empty).  A lookup reads
 *     a slot, then the record, which holds both the name to compare and
 *     the ID: two dependent memory accesses.  The slot position is taken
 *     from the top bits of the tag, so doubling the table (past 3/4 load)
 *     re-places the slots without touching the names.
 * Overhead beyond the name bytes, per entry: 8 / load (10.7 to 21.3) for
 * the table, 4 (up to 6 with slack) for refs, 4 + 1 + padding (5 to 8)
 * for the record, plus the unused tail of the newest block;
 * kg_dict_bytes() reports what is really allocated.
 *
 * Namespaces (kg_dict_split_names, for IRIs): a name is stored as the
 * number of its namespace, the bytes up to and including its last '/',
 * '#' or ':' (at least KG_DICT_NS_MIN of them), and the rest, its local
 * part: the record is "uint32 id, uint16 namespace + 1 (0: stored
 * whole), local part, NUL", so that a Wikidata IRI costs its local part
 * plus 7 to 10 bytes.  The namespaces live in a second, plain dictionary
 * (at most KG_DICT_MAX_NS of them; names of others are stored whole).
 * Lookups still take and compare the whole name, so a namespaced
 * dictionary finds exactly what a plain one would.
 *
 * Limits: names may hold any byte except NUL, up to KG_DICT_MAX_NAME
 * bytes; at most KG_DICT_MAX_IDS names and 16 GiB of records (inserting
 * past a limit is an error).  Not thread-safe for writers; concurrent
 * readers are fine.
 */
#ifndef KG_DICT_H
#define KG_DICT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The slot index comes from a 32-bit tag: at most 2^32 slots at 3/4 load. */
#define KG_DICT_MAX_IDS 0xc0000000u
/* Arena blocks: 2^KG_DICT_BLOCK_BITS bytes each. */
#define KG_DICT_BLOCK_BITS 18
#define KG_DICT_MAX_NAME ((1u << KG_DICT_BLOCK_BITS) - 16)
/* Namespaces: the shortest one split off, and the most of them. */
#define KG_DICT_NS_MIN 4
#define KG_DICT_MAX_NS 0xffffu

struct kg_dict {
	uint64_t *slots;	/* cap slots: tag << 32 | ref */
	uint64_t cap;		/* power of two, or 0 before the first insert */
	unsigned cap_bits;	/* log2(cap) */
	uint64_t n;		/* number of names */
	uint32_t *refs;		/* refs[id], n_alloc entries */
	uint64_t n_alloc;
	char **blocks;		/* the arena: blocks[0..n_blocks) in use */
	uint32_t n_blocks;
	uint32_t blocks_ready;	/* blocks allocated (the last chunk's rest) */
	uint32_t blocks_alloc;	/* entries of the blocks array */
	uint32_t used;		/* bytes used in the newest block */
	char **chunks;		/* allocations holding the blocks */
	uint32_t n_chunks;
	size_t arena_bytes;	/* bytes of all chunks */
	uint64_t name_bytes;	/* sum of name lengths (without NULs) */
	struct kg_dict *ns;	/* namespaces, or NULL: names stored whole */
	const char **ns_name;	/* ns_name[k], ns_len[k]: namespace k */
	uint32_t *ns_len;
	uint32_t ns_short;	/* the shortest namespace length, 0 once a
				 * name is stored whole */
	uint32_t ns_last;	/* the namespace of the name added last + 1,
				 * or 0 */
};

#define KG_DICT_INIT { 0 }

/* Initialise an empty dictionary (same as KG_DICT_INIT). */
void kg_dict_init(struct kg_dict *d);
/* Free everything; leaves *d empty and reusable.  Safe on KG_DICT_INIT. */
void kg_dict_release(struct kg_dict *d);

/*
 * Store names split into namespace and local part (see the opening
 * comment).  No effect unless d is empty.  kg_dict_name then cannot be
 * used: read names with kg_dict_name_parts.
 */
void kg_dict_split_names(struct kg_dict *d);

/* The hash used for names (XXH3-64); exposed so that callers can hash
 * once for several calls and for prefetching. */
uint64_t kg_dict_hash(const char *s, size_t len);

/*
 * The prefetch helpers must be forced inline: GCC 12 finds a small static
 * inline function whose only effect is __builtin_prefetch "pure", and
 * deletes calls to it whose (void) result is unused before inlining, so
 * the prefetch silently vanished.
 */
#if defined(__GNUC__)
#define KG_DICT_INLINE static inline __attribute__((always_inline))
#else
#define KG_DICT_INLINE static inline
#endif

/* The record a reference names (ref != 0). */
static inline const char *
kg_dict_record(const struct kg_dict *d, uint32_t ref)
{
	return d->blocks[ref >> (KG_DICT_BLOCK_BITS - 2)] +
	    (size_t)(ref & ((1u << (KG_DICT_BLOCK_BITS - 2)) - 1)) * 4;
}

/* Hint the CPU to load the table slot of a hash (no effect otherwise). */
KG_DICT_INLINE void
kg_dict_prefetch(const struct kg_dict *d, uint64_t hash)
{
	if (d->cap != 0)
		__builtin_prefetch(&d->slots[(hash >> 32) >> (32 - d->cap_bits)]);
}

/*
 * Lookups of many names at once, in stages that let the CPU overlap the
 * cache misses of different names: kg_dict_prefetch(hash), then
 * kg_dict_candidate(hash) (the first record on the probe path whose tag
 * matches, or 0) and kg_dict_prefetch_record(ref), and last
 * kg_dict_record_id(ref, name), which is the ID if the record holds that
 * name and -1 if not.  -1 there means nothing: fall back to
 * kg_dict_find_hashed or kg_dict_intern_hashed.
 */
static inline uint32_t
kg_dict_candidate(const struct kg_dict *d, uint64_t hash)
{
	uint32_t tag = (uint32_t)(hash >> 32);
	uint64_t mask = d->cap - 1, i, slot;

	if (d->cap == 0)
		return 0;
	for (i = (uint64_t)tag >> (32 - d->cap_bits);; i = (i + 1) & mask) {
		slot = d->slots[i];
		if (slot == 0)
			return 0;
		if ((uint32_t)(slot >> 32) == tag)
			return (uint32_t)slot;
	}
}

KG_DICT_INLINE void
kg_dict_prefetch_record(const struct kg_dict *d, uint32_t ref, size_t len)
{
	const char *r = kg_dict_record(d, ref);

	/* Both ends: short records often straddle a cache line.  A split
	 * name's record is at least its shortest namespace shorter. */
	__builtin_prefetch(r);
	__builtin_prefetch(r + 4 + (d->ns != NULL && len >= d->ns_short ?
	    len + 2 - d->ns_short : len));
}

int64_t kg_dict_record_id(const struct kg_dict *d, uint32_t ref,
    const char *s, size_t len);

/* The ID of name s[0..len), or -1 if absent. */
int64_t kg_dict_find(const struct kg_dict *d, const char *s, size_t len);
/* The same with a hash from kg_dict_hash(s, len). */
int64_t kg_dict_find_hashed(const struct kg_dict *d, const char *s,
    size_t len, uint64_t hash);

/*
 * The ID of s[0..len), inserting it with the next ID when absent (the
 * bytes are copied).  *added (when not NULL) is set to 1 on insertion, 0
 * otherwise.  Returns the ID, or -1 after kg_error() when the name holds a
 * NUL byte, is too long, or the dictionary is full.
 */
int64_t kg_dict_intern(struct kg_dict *d, const char *s, size_t len,
    int *added);
int64_t kg_dict_intern_hashed(struct kg_dict *d, const char *s, size_t len,
    uint64_t hash, int *added);

/* Number of names. */
static inline uint64_t
kg_dict_size(const struct kg_dict *d)
{
	return d->n;
}

/* The NUL-terminated name of id (id < size) in a dictionary without
 * namespaces; owned by the dictionary and valid (it never moves) until
 * kg_dict_release. */
static inline const char *
kg_dict_name(const struct kg_dict *d, uint32_t id)
{
	return kg_dict_record(d, d->refs[id]) + 4;
}

/*
 * The name of id (id < size) in any dictionary, in two pieces: its
 * namespace in *ns (*ns_len bytes, not NUL-terminated; length 0 when the
 * name is stored whole) and the NUL-terminated rest, returned.  Both are
 * owned by the dictionary and valid until kg_dict_release.
 */
static inline const char *
kg_dict_name_parts(const struct kg_dict *d, uint32_t id, const char **ns,
    size_t *ns_len)
{
	const char *r = kg_dict_record(d, d->refs[id]);
	uint16_t k;

	*ns = "";
	*ns_len = 0;
	if (d->ns == NULL)
		return r + 4;
	memcpy(&k, r + 4, 2);
	if (k != 0) {
		*ns = d->ns_name[k - 1];
		*ns_len = d->ns_len[k - 1];
	}
	return r + 6;
}

/* Bytes allocated by the dictionary: table, references, arena blocks
 * (including the unused tail of the newest) and the block list. */
size_t kg_dict_bytes(const struct kg_dict *d);
/* Sum of the lengths of all names (the "name bytes"). */
static inline uint64_t
kg_dict_name_bytes(const struct kg_dict *d)
{
	return d->name_bytes;
}

#endif
