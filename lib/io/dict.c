/*
 * dict: see dict.h for the layout and its memory figures.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The hash is in the innermost loop of kg-ingest: inline XXH3 rather
 * than call through the shared library's dispatch. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "io/dict.h"
#include "core/util.h"

#define BLOCK_SIZE ((size_t)1 << KG_DICT_BLOCK_BITS)
#define UNIT_BITS (KG_DICT_BLOCK_BITS - 2)	/* 4-byte units per block */
#define MAX_BLOCKS ((uint32_t)1 << (32 - UNIT_BITS))
#define BLOCK_SLACK 8		/* see name_equal */
#define CHUNK_MAX_BLOCKS 64	/* 16 MiB */
#define HUGE_PAGE ((size_t)2 << 20)
#define TABLE_MIN_BITS 6

/*
 * Ask for transparent huge pages on a large allocation.  Lookups touch
 * the table and the records at random; with 4 KiB pages nearly every such
 * access also missed the TLB.  Only a hint: failure is ignored.
 */
static void
advise_huge(void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p, page = 4096, b;

	if (n < 2 * HUGE_PAGE)
		return;
	b = (a + n) & ~(page - 1);
	a = (a + page - 1) & ~(page - 1);
#ifdef MADV_HUGEPAGE
	if (b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE);
#endif
}

void
kg_dict_init(struct kg_dict *d)
{
	struct kg_dict zero = KG_DICT_INIT;

	*d = zero;
}

void
kg_dict_release(struct kg_dict *d)
{
	uint32_t i;

	for (i = 0; i < d->n_chunks; i++)
		free(d->chunks[i]);
	free(d->chunks);
	free(d->blocks);
	free(d->slots);
	free(d->refs);
	if (d->ns != NULL)
		kg_dict_release(d->ns);
	free(d->ns);
	free(d->ns_name);
	free(d->ns_len);
	kg_dict_init(d);
}

void
kg_dict_split_names(struct kg_dict *d)
{
	if (d->ns != NULL || d->n != 0)
		return;
	d->ns = kg_xcalloc(1, sizeof(*d->ns));
	kg_dict_init(d->ns);
	d->ns_short = KG_DICT_MAX_NAME;
}

uint64_t
kg_dict_hash(const char *s, size_t len)
{
	return XXH3_64bits(s, len);
}

static inline uint64_t
slot_index(uint32_t tag, unsigned bits)
{
	/* Top bits of the tag: with bits == 32 the shift is 0, never 32. */
	return (uint64_t)tag >> (32 - bits);
}

/* Nonzero if the 64-bit word holds a zero byte. */
static inline uint64_t
has_zero(uint64_t v)
{
	return (v - 0x0101010101010101ULL) & ~v & 0x8080808080808080ULL;
}

/* a[0..n) == b[0..n), inline: a namespace is compared on every lookup. */
static inline int
bytes_equal(const char *a, const char *b, size_t n)
{
	uint64_t x, y;

	if (n < 8) {
		for (; n > 0; n--)
			if (*a++ != *b++)
				return 0;
		return 1;
	}
	/* The last word may overlap the one before it. */
	memcpy(&x, a + n - 8, 8);
	memcpy(&y, b + n - 8, 8);
	if (x != y)
		return 0;
	for (; n > 8; n -= 8, a += 8, b += 8) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return 0;
	}
	return 1;
}

/*
 * A stored name equals s[0..len) if the bytes agree and its NUL comes
 * exactly at len.  Eight bytes at a time; a word of the stored name is
 * read only while all earlier words matched the key and held no NUL, so
 * reads end in the word holding the stored NUL, at most 7 bytes past it
 * (every block keeps BLOCK_SLACK bytes free at its end).
 */
static inline int
name_equal(const char *name, const char *s, size_t len)
{
	uint64_t a, b;

	while (len >= 8) {
		memcpy(&a, name, 8);
		memcpy(&b, s, 8);
		if (a != b || has_zero(a))
			return 0;
		name += 8;
		s += 8;
		len -= 8;
	}
	for (; len > 0; len--, name++, s++)
		if (*name != *s || *name == '\0')
			return 0;
	return *name == '\0';
}

int64_t
kg_dict_record_id(const struct kg_dict *d, uint32_t ref, const char *s,
    size_t len)
{
	const char *r = kg_dict_record(d, ref), *name = r + 4;
	uint32_t id;

	if (d->ns != NULL) {
		uint16_t k;

		memcpy(&k, name, 2);
		name += 2;
		if (k != 0) {
			size_t n = d->ns_len[k - 1];

			if (len < n || !bytes_equal(s, d->ns_name[k - 1], n))
				return -1;
			s += n;
			len -= n;
		}
	}
	if (!name_equal(name, s, len))
		return -1;
	memcpy(&id, r, 4);
	return id;
}

int64_t
kg_dict_find_hashed(const struct kg_dict *d, const char *s, size_t len,
    uint64_t hash)
{
	uint32_t tag = (uint32_t)(hash >> 32);
	uint64_t mask = d->cap - 1, i, slot;
	int64_t id;

	if (d->cap == 0)
		return -1;
	for (i = slot_index(tag, d->cap_bits);; i = (i + 1) & mask) {
		slot = d->slots[i];
		if (slot == 0)
			return -1;
		if ((uint32_t)(slot >> 32) == tag &&
		    (id = kg_dict_record_id(d, (uint32_t)slot, s, len)) >= 0)
			return id;
	}
}

int64_t
kg_dict_find(const struct kg_dict *d, const char *s, size_t len)
{
	return kg_dict_find_hashed(d, s, len, kg_dict_hash(s, len));
}

/* Double the table (or create it), re-placing every slot by its tag. */
static void
grow_table(struct kg_dict *d)
{
	unsigned bits = d->cap == 0 ? TABLE_MIN_BITS : d->cap_bits + 1;
	uint64_t cap = (uint64_t)1 << bits, mask = cap - 1, i, j;
	uint64_t *slots = kg_xcalloc(cap, sizeof(*slots));

	advise_huge(slots, cap * sizeof(*slots));
	for (i = 0; i < d->cap; i++) {
		uint64_t slot = d->slots[i];

		if (slot == 0)
			continue;
		for (j = slot_index((uint32_t)(slot >> 32), bits);
		    slots[j] != 0; j = (j + 1) & mask)
			;
		slots[j] = slot;
	}
	free(d->slots);
	d->slots = slots;
	d->cap = cap;
	d->cap_bits = bits;
}

/*
 * Start a new block.  Blocks come in chunks that grow with the arena (a
 * quarter of the blocks so far, up to 16 MiB), so a small dictionary
 * stays small and a large one gets few, huge-page backed allocations.
 * Returns 0, or -1 when the arena is full.
 */
static int
new_block(struct kg_dict *d)
{
	if (d->n_blocks == MAX_BLOCKS)
		return -1;
	if (d->n_blocks == d->blocks_ready) {
		uint32_t k = d->n_blocks / 4, i;
		size_t size;
		char *c;

		if (k < 1)
			k = 1;
		if (k > CHUNK_MAX_BLOCKS)
			k = CHUNK_MAX_BLOCKS;
		if (k > MAX_BLOCKS - d->n_blocks)
			k = MAX_BLOCKS - d->n_blocks;
		size = (size_t)k * BLOCK_SIZE;
		c = size >= 2 * HUGE_PAGE ? kg_xaligned_alloc(HUGE_PAGE, size) :
		    kg_xmalloc(size);
		advise_huge(c, size);
		d->chunks = kg_xreallocarray(d->chunks, d->n_chunks + 1,
		    sizeof(*d->chunks));
		d->chunks[d->n_chunks++] = c;
		d->arena_bytes += size;
		if (d->blocks_ready + k > d->blocks_alloc) {
			d->blocks_alloc = d->blocks_alloc < 16 ? 16 :
			    d->blocks_alloc * 2;
			while (d->blocks_alloc < d->blocks_ready + k)
				d->blocks_alloc *= 2;
			d->blocks = kg_xreallocarray(d->blocks, d->blocks_alloc,
			    sizeof(*d->blocks));
		}
		for (i = 0; i < k; i++)
			d->blocks[d->blocks_ready + i] = c + i * BLOCK_SIZE;
		d->blocks_ready += k;
	}
	d->n_blocks++;
	/* Reference 0 means an empty slot: nothing starts at offset 0. */
	d->used = d->n_blocks == 1 ? 4 : 0;
	return 0;
}

/*
 * The namespace of s[0..len) (see dict.h), as stored in its record: the
 * namespace's number + 1 with its length in *n, or 0 (stored whole, *n
 * 0).  Adds the namespace when new.  Returns -1 when the namespaces'
 * dictionary is full (after kg_error()).
 */
static int
namespace_of(struct kg_dict *d, const char *s, size_t len, size_t *n)
{
	size_t i;
	int64_t k;
	int added;

	*n = 0;
	for (i = len; i > 0; i--)
		if (s[i - 1] == '/' || s[i - 1] == '#' || s[i - 1] == ':')
			break;
	if (i < KG_DICT_NS_MIN) {
		d->ns_short = 0;
		return 0;
	}
	/* Names come in runs of one namespace: try the last one first. */
	k = (int64_t)d->ns_last - 1;
	if (k >= 0 && d->ns_len[k] == i && memcmp(s, d->ns_name[k], i) == 0) {
		*n = i;
		return (int)k + 1;
	}
	if (kg_dict_size(d->ns) == KG_DICT_MAX_NS && kg_dict_find(d->ns, s,
	    i) < 0) {
		d->ns_short = 0;
		return 0;
	}
	if ((k = kg_dict_intern(d->ns, s, i, &added)) < 0)
		return -1;
	if (added) {
		/* Room for twice as many whenever k reaches a power of two. */
		if ((k & (k - 1)) == 0) {
			size_t cap = k == 0 ? 1 : 2 * (size_t)k;

			d->ns_name = kg_xreallocarray(d->ns_name, cap,
			    sizeof(*d->ns_name));
			d->ns_len = kg_xreallocarray(d->ns_len, cap,
			    sizeof(*d->ns_len));
		}
		d->ns_name[k] = kg_dict_name(d->ns, (uint32_t)k);
		d->ns_len[k] = (uint32_t)i;
		if (i < d->ns_short)
			d->ns_short = (uint32_t)i;
	}
	d->ns_last = (uint32_t)k + 1;
	*n = i;
	return (int)k + 1;
}

/* Store a record for id (its namespace k, 0 for none, then s[0..len) when
 * the dictionary splits names); returns its reference, or 0 when full. */
static uint32_t
arena_add(struct kg_dict *d, uint32_t id, int k, const char *s, size_t len)
{
	size_t head = d->ns != NULL ? 6 : 4;
	size_t need = (head + len + 1 + 3) & ~(size_t)3;
	uint16_t k16 = (uint16_t)k;
	uint32_t ref;
	char *r;

	if (d->n_blocks == 0 || d->used + need + BLOCK_SLACK > BLOCK_SIZE)
		if (new_block(d) < 0)
			return 0;
	ref = (d->n_blocks - 1) << UNIT_BITS | d->used >> 2;
	r = d->blocks[d->n_blocks - 1] + d->used;
	memcpy(r, &id, 4);
	if (d->ns != NULL)
		memcpy(r + 4, &k16, 2);
	memcpy(r + head, s, len);
	memset(r + head + len, 0, need - head - len);
	d->used += (uint32_t)need;
	return ref;
}

int64_t
kg_dict_intern_hashed(struct kg_dict *d, const char *s, size_t len,
    uint64_t hash, int *added)
{
	uint32_t tag = (uint32_t)(hash >> 32), ref;
	uint64_t mask, i;
	size_t nsl = 0;
	int64_t id;
	int k = 0;

	if (added != NULL)
		*added = 0;
	id = kg_dict_find_hashed(d, s, len, hash);
	if (id >= 0)
		return id;
	if (memchr(s, '\0', len) != NULL) {
		kg_error("name holds a NUL byte");
		return -1;
	}
	if (len > KG_DICT_MAX_NAME) {
		kg_error("name of %zu bytes is longer than %u", len,
		    KG_DICT_MAX_NAME);
		return -1;
	}
	if (d->n >= KG_DICT_MAX_IDS) {
		kg_error("dictionary full (%u names)", KG_DICT_MAX_IDS);
		return -1;
	}
	if (d->ns != NULL && (k = namespace_of(d, s, len, &nsl)) < 0)
		return -1;
	id = (int64_t)d->n;
	ref = arena_add(d, (uint32_t)id, k, s + nsl, len - nsl);
	if (ref == 0) {
		kg_error("dictionary full (16 GiB of names)");
		return -1;
	}
	if ((d->n + 1) * 4 > d->cap * 3)
		grow_table(d);
	if (d->n == d->n_alloc) {
		d->n_alloc = d->n_alloc < 64 ? 64 : d->n_alloc + d->n_alloc / 2;
		d->refs = kg_xreallocarray(d->refs, d->n_alloc,
		    sizeof(*d->refs));
		advise_huge(d->refs, d->n_alloc * sizeof(*d->refs));
	}
	mask = d->cap - 1;
	for (i = slot_index(tag, d->cap_bits); d->slots[i] != 0;
	    i = (i + 1) & mask)
		;
	d->slots[i] = (uint64_t)tag << 32 | ref;
	d->refs[id] = ref;
	d->name_bytes += len;
	d->n++;
	if (added != NULL)
		*added = 1;
	return id;
}

int64_t
kg_dict_intern(struct kg_dict *d, const char *s, size_t len, int *added)
{
	return kg_dict_intern_hashed(d, s, len, kg_dict_hash(s, len), added);
}

size_t
kg_dict_bytes(const struct kg_dict *d)
{
	return sizeof(*d) + d->cap * sizeof(*d->slots) +
	    d->n_alloc * sizeof(*d->refs) + d->arena_bytes +
	    d->blocks_alloc * sizeof(*d->blocks) +
	    d->n_chunks * sizeof(*d->chunks) + (d->ns == NULL ? 0 :
	    kg_dict_bytes(d->ns) + kg_dict_size(d->ns) *
	    (sizeof(*d->ns_name) + sizeof(*d->ns_len)));
}
