/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LPM tables: the pipelined B+tree over prefix boundaries of docs/tables.md.
 *
 * A prefix p/len of a K-bit key covers [p, p + 2^(K-len)). The boundaries (key 0, and
 * every start and every end below 2^K of a prefix in the table) cut the key space into
 * intervals on which the longest-prefix answer is constant; the leaves hold the boundaries
 * in order, each with its interval's result. A boundary stays while some prefix starts or
 * ends there (the prefix set says so, no count is stored); once none does, its interval
 * answers as its left neighbour and the boundary is dropped.
 *
 * The shadow holds every node as the hardware has it (slot keys, pointers, result bits),
 * the level of the tree's real root (the levels above it are single-slot nodes, so every
 * lookup walks all levels), free lists of nodes and results, and the prefix set: result r
 * belongs to the prefix stored at r, so result indices double as prefix ids. Prefixes and
 * slot keys are kept in canonical form (the table's key width, big-endian) with the bits
 * beyond a prefix's length zero.
 *
 * Updates never give a lookup a wrong answer: a node is written whole in one WRITE, and a
 * WRITE completes only once every lookup that read the old word has left the pipeline.
 * Boundary inserts and removals keep every answer; answers then change by leaf rewrites.
 *
 * Per-entry counters count per result: a result never moves, so an add zeroes it before
 * writing it and a delete drops its count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind.h"

#define NO_RESULT UINT32_MAX
#define MAX_LEVEL_NODES (MATCHA_HW_LPM_ADDRESS_MASK + 1u) /* nodes and results an INDEX reaches */
#define MAX_POINTER_BITS MATCHA_HW_LPM_LEVEL_SHIFT
#define MAX_FANOUT (MATCHA_HW_WIN_STAGING_WORDS * 32 / \
		    (MATCHA_HW_LPM_POINTER_SHIFT + MATCHA_HW_LPM_MIN_POINTER_BITS + 1))
#define MAX_LEVELS 32

struct lpm_level {
	unsigned nodes;
	unsigned *count;      /* per node: slots in use, 0 when free */
	uint8_t *key;         /* nodes * fanout * key_bytes: each slot's key */
	uint32_t *ptr;        /* nodes * fanout: child node, or result index in a leaf */
	uint8_t *has_result;  /* nodes * fanout: a leaf slot's pointer is a result */
	uint32_t *free_nodes; /* stack of free node ids, lowest on top */
	unsigned nfree;
};

struct lpm_tree {
	unsigned levels, fanout;
	unsigned pointer_bits; /* of a slot's child or result pointer (descriptor EXTRA) */
	unsigned memory_levels; /* the lowest levels, kept in the card's memory */
	unsigned half;       /* ceil(fanout/2): the fewest slots of a node below the root */
	unsigned root;       /* the level of the real root; those above are single slots */
	unsigned node_words; /* DATA words of a node */
	struct lpm_level *level;
	unsigned results;
	unsigned held;           /* prefixes in the table */
	uint8_t *prefix;         /* results * key_bytes */
	uint16_t *len;           /* prefix length of each allocated result */
	uint32_t *free_results;  /* stack, lowest on top */
	unsigned nfree_results;
	uint32_t *buckets;       /* prefix set: open addressing over result ids */
	unsigned nbuckets;       /* power of two, at least twice the results */
	/* A load in progress (matcha_lpm_load_begin): the held prefixes are in the prefix set
	 * only, their actions and data here until the load's end writes them with the tree. */
	bool loading;
	uint8_t *load_action;    /* results */
	uint32_t *load_data;     /* results * data_words */
};

static struct lpm_tree *shadow(const struct matcha_table *t) { return t->state; }

/* Ends a load: its actions and data are gone, adds write the hardware again. */
static void stop_loading(struct lpm_tree *tree)
{
	tree->loading = false;
	free(tree->load_action);
	free(tree->load_data);
	tree->load_action = NULL;
	tree->load_data = NULL;
}

/* A node being rebuilt: one slot more than a node holds, for the split of a full one. */
struct node_buf {
	unsigned count;
	uint8_t key[MAX_FANOUT + 1][MATCHA_MAX_KEY_BYTES];
	uint32_t ptr[MAX_FANOUT + 1];
	uint8_t has_result[MAX_FANOUT + 1];
};

/* Where a key's walk went: node[i] at level i, and the slot idx[i] it took there. */
struct path {
	uint32_t node[MAX_LEVELS];
	unsigned idx[MAX_LEVELS];
};

/* ------------------------------------------------------------------------ key bits */

/* Clears every bit of a canonical key from `len` bits below its top on. */
static void truncate_prefix(uint8_t *p, unsigned key_bytes, unsigned key_bits, unsigned len)
{
	unsigned bit = key_bytes * 8 - key_bits + len;
	if (bit % 8)
		p[bit / 8] &= (uint8_t)(0xFF00u >> (bit % 8));
	for (unsigned i = div_ceil(bit, 8); i < key_bytes; i++)
		p[i] = 0;
}


/* Adds (or, with `down`, subtracts) 2^bit to a canonical key; false when the result leaves
 * [0, 2^key_bits). */
static bool step_key(uint8_t *k, unsigned key_bytes, unsigned key_bits, unsigned bit, bool down)
{
	if (bit >= key_bits)
		return false;
	unsigned carry = 1u << bit % 8;
	for (unsigned i = key_bytes - 1 - bit / 8;; i--) {
		unsigned v = down ? (unsigned)k[i] - carry : (unsigned)k[i] + carry;
		k[i] = (uint8_t)v;
		carry = v >> 8 ? 1 : 0;
		if (!carry)
			break;
		if (i == 0)
			return false;
	}
	/* Padding bits above the key must stay zero. */
	unsigned pad = key_bytes * 8 - key_bits;
	return !pad || !(k[0] >> (8 - pad));
}

/* Trailing zero bits of a canonical key (key_bits for key 0). */
static unsigned trailing_zeros(const uint8_t *k, unsigned key_bytes, unsigned key_bits)
{
	for (unsigned bit = 0; bit < key_bits; bit++)
		if (k[key_bytes - 1 - bit / 8] >> bit % 8 & 1)
			return bit;
	return key_bits;
}

static int key_cmp(const struct matcha_table *t, const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, t->key_bytes);
}

/* The end of prefix p/len (p + 2^(K-len)) in `end`; false when it is 2^K, no boundary. */
static bool prefix_end(const struct matcha_table *t, const uint8_t *p, unsigned len, uint8_t *end)
{
	memcpy(end, p, t->key_bytes);
	return step_key(end, t->key_bytes, t->info.key_bits, t->info.key_bits - len, false);
}

/* ---------------------------------------------------------------------- prefix set */

static uint32_t bucket_home(const struct matcha_table *t, const uint8_t *p, unsigned len)
{
	uint64_t h = matcha_crc64_xz(p, t->key_bytes) ^ (uint64_t)len * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h ^ h >> 32) & (shadow(t)->nbuckets - 1);
}

static const uint8_t *prefix_at(const struct matcha_table *t, uint32_t r)
{
	return shadow(t)->prefix + (size_t)r * t->key_bytes;
}

static uint32_t prefix_find(const struct matcha_table *t, const uint8_t *p, unsigned len)
{
	const struct lpm_tree *tree = shadow(t);
	for (uint32_t i = bucket_home(t, p, len);; i = (i + 1) & (tree->nbuckets - 1)) {
		uint32_t r = tree->buckets[i];
		if (r == NO_RESULT)
			return NO_RESULT;
		if (tree->len[r] == len && !memcmp(prefix_at(t, r), p, t->key_bytes))
			return r;
	}
}

static void prefix_insert(struct matcha_table *t, uint32_t r)
{
	struct lpm_tree *tree = shadow(t);
	uint32_t i = bucket_home(t, prefix_at(t, r), tree->len[r]);
	while (tree->buckets[i] != NO_RESULT)
		i = (i + 1) & (tree->nbuckets - 1);
	tree->buckets[i] = r;
}

/* Linear-probing removal by backward shift: no tombstones to accumulate. */
static void prefix_remove(struct matcha_table *t, uint32_t r)
{
	struct lpm_tree *tree = shadow(t);
	uint32_t mask = tree->nbuckets - 1;
	uint32_t i = bucket_home(t, prefix_at(t, r), tree->len[r]);
	while (tree->buckets[i] != r)
		i = (i + 1) & mask;
	tree->buckets[i] = NO_RESULT;
	for (uint32_t j = (i + 1) & mask; tree->buckets[j] != NO_RESULT; j = (j + 1) & mask) {
		uint32_t q = tree->buckets[j];
		uint32_t home = bucket_home(t, prefix_at(t, q), tree->len[q]);
		/* q may fill the hole at i unless its home lies cyclically in (i, j]. */
		bool stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			tree->buckets[i] = q;
			tree->buckets[j] = NO_RESULT;
			i = j;
		}
	}
}

/* ------------------------------------------------------------------------ nodes */

static uint32_t lpm_index(unsigned level, uint32_t address)
{
	return (uint32_t)level << MATCHA_HW_LPM_LEVEL_SHIFT | address;
}

static size_t slot_at(const struct lpm_tree *tree, uint32_t node, unsigned j)
{
	return (size_t)node * tree->fanout + j;
}

static uint8_t *slot_key(const struct matcha_table *t, unsigned i, uint32_t node, unsigned j)
{
	return shadow(t)->level[i].key + slot_at(shadow(t), node, j) * t->key_bytes;
}

static void load(const struct matcha_table *t, unsigned i, uint32_t node, struct node_buf *b)
{
	const struct lpm_level *lv = &shadow(t)->level[i];
	b->count = lv->count[node];
	for (unsigned j = 0; j < b->count; j++) {
		size_t s = slot_at(shadow(t), node, j);
		memcpy(b->key[j], slot_key(t, i, node, j), t->key_bytes);
		b->ptr[j] = lv->ptr[s];
		b->has_result[j] = lv->has_result[s];
	}
}

/* Sets `count` (<= 32) bits of a little-endian word array from bit `at` on. */
static void put_bits(uint32_t *w, unsigned at, uint32_t v, unsigned count)
{
	for (unsigned b = 0; b < count; b++)
		if (v >> b & 1)
			w[(at + b) / 32] |= 1u << (at + b) % 32;
}

static unsigned get_bit(const uint32_t *w, unsigned at)
{
	return w[at / 32] >> at % 32 & 1;
}

/* Bits of a slot's flags and pointer: its key starts there. */
static unsigned key_shift(unsigned pointer_bits)
{
	return MATCHA_HW_LPM_POINTER_SHIFT + pointer_bits;
}

static unsigned slot_bits(unsigned pointer_bits, unsigned key_bits)
{
	return key_shift(pointer_bits) + key_bits;
}

static uint32_t pointer_of(uint32_t low, unsigned pointer_bits)
{
	return low >> MATCHA_HW_LPM_POINTER_SHIFT & ((1u << pointer_bits) - 1);
}

/* A node's DATA words, in the slot format of docs/tables.md (LPM_SLOT_*). */
static void encode(const struct matcha_table *t, const struct node_buf *b, uint32_t *w)
{
	unsigned k = t->info.key_bits, pb = shadow(t)->pointer_bits, sb = slot_bits(pb, k);
	memset(w, 0, MATCHA_HW_WIN_STAGING_WORDS * sizeof *w);
	for (unsigned j = 0; j < b->count; j++) {
		unsigned at = j * sb;
		uint32_t flags = MATCHA_HW_LPM_SLOT_VALID | (b->has_result[j] ? MATCHA_HW_LPM_SLOT_HAS_RESULT : 0);
		put_bits(w, at, flags | b->ptr[j] << MATCHA_HW_LPM_POINTER_SHIFT, key_shift(pb));
		for (unsigned bit = 0; bit < k; bit++)
			put_bits(w, at + key_shift(pb) + bit,
				 b->key[j][t->key_bytes - 1 - bit / 8] >> bit % 8 & 1, 1);
	}
}

/* Slot j of a node's DATA words: its flags and pointer, and its key (canonical) in `key`. */
static uint32_t decode_slot(unsigned pointer_bits, unsigned key_bits, const uint32_t *w,
			    unsigned j, uint8_t *key)
{
	unsigned at = j * slot_bits(pointer_bits, key_bits), key_bytes = div_ceil(key_bits, 8);
	uint32_t low = 0;
	for (unsigned b = 0; b < key_shift(pointer_bits); b++)
		low |= (uint32_t)get_bit(w, at + b) << b;
	memset(key, 0, key_bytes);
	for (unsigned bit = 0; bit < key_bits; bit++)
		key[key_bytes - 1 - bit / 8] |=
			(uint8_t)(get_bit(w, at + key_shift(pointer_bits) + bit) << bit % 8);
	return low;
}

/* Writes node `node` of level i whole (one WRITE: a lookup sees it all old or all new) and
 * mirrors it in the shadow. */
static int write_node(matcha_dev *dev, struct matcha_table *t, unsigned i, uint32_t node,
		      const struct node_buf *b)
{
	struct lpm_tree *tree = shadow(t);
	struct lpm_level *lv = &tree->level[i];
	uint32_t words[MATCHA_HW_WIN_STAGING_WORDS];
	encode(t, b, words);
	struct staged_entry e = { .data = words, .data_words = tree->node_words, .no_flags = true };
	int rc = matcha_window_write(dev, t, lpm_index(i, node), &e);
	if (rc)
		return rc;
	lv->count[node] = b->count;
	for (unsigned j = 0; j < b->count; j++) {
		size_t s = slot_at(tree, node, j);
		memcpy(slot_key(t, i, node, j), b->key[j], t->key_bytes);
		lv->ptr[s] = b->ptr[j];
		lv->has_result[s] = b->has_result[j];
	}
	return 0;
}

static void insert_at(const struct matcha_table *t, struct node_buf *b, unsigned pos,
		      const uint8_t *key, uint32_t ptr, bool has_result)
{
	for (unsigned j = b->count; j > pos; j--) {
		memcpy(b->key[j], b->key[j - 1], t->key_bytes);
		b->ptr[j] = b->ptr[j - 1];
		b->has_result[j] = b->has_result[j - 1];
	}
	memcpy(b->key[pos], key, t->key_bytes);
	b->ptr[pos] = ptr;
	b->has_result[pos] = has_result;
	b->count++;
}

/* Removes `n` slots from `pos` on. */
static void remove_at(const struct matcha_table *t, struct node_buf *b, unsigned pos, unsigned n)
{
	for (unsigned j = pos; j + n < b->count; j++) {
		memcpy(b->key[j], b->key[j + n], t->key_bytes);
		b->ptr[j] = b->ptr[j + n];
		b->has_result[j] = b->has_result[j + n];
	}
	b->count -= n;
}

/* Appends slots [from, from+n) of `src`. */
static void append(const struct matcha_table *t, struct node_buf *b, const struct node_buf *src,
		   unsigned from, unsigned n)
{
	for (unsigned j = 0; j < n; j++)
		insert_at(t, b, b->count, src->key[from + j], src->ptr[from + j], src->has_result[from + j]);
}

/* The slot a lookup takes in node `node` of level i: the last one whose key is not above
 * `key`, slot 0 whatever its key (the hardware's rule). */
static unsigned choose(const struct matcha_table *t, unsigned i, uint32_t node, const uint8_t *key)
{
	unsigned j = 0, count = shadow(t)->level[i].count[node];
	while (j + 1 < count && key_cmp(t, slot_key(t, i, node, j + 1), key) <= 0)
		j++;
	return j;
}

static void descend(const struct matcha_table *t, const uint8_t *key, struct path *p)
{
	const struct lpm_tree *tree = shadow(t);
	p->node[0] = 0;
	for (unsigned i = 0; i < tree->levels; i++) {
		p->idx[i] = choose(t, i, p->node[i], key);
		if (i + 1 < tree->levels)
			p->node[i + 1] = tree->level[i].ptr[slot_at(tree, p->node[i], p->idx[i])];
	}
}

static int alloc_node(matcha_dev *dev, struct matcha_table *t, unsigned i, uint32_t *node)
{
	struct lpm_level *lv = &shadow(t)->level[i];
	if (lv->nfree == 0)
		return matcha_fail(dev, MATCHA_ENOSPC, "LPM table %u: no free node at level %u (%u "
				   "nodes), which the table's size should rule out", t->index, i,
				   lv->nodes);
	*node = lv->free_nodes[--lv->nfree];
	return 0;
}

static void free_node(struct matcha_table *t, unsigned i, uint32_t node)
{
	struct lpm_level *lv = &shadow(t)->level[i];
	lv->count[node] = 0;
	lv->free_nodes[lv->nfree++] = node;
}

/*
 * Puts a slot at `pos` of the path's node at level i. A full node splits: the new right
 * node is written first (nothing points at it yet), then the parent gets its slot (in
 * place, or by a split of its own), and only then, every lookup that the old parent sent
 * into the left part of the range having drained, the left node shrinks.
 */
static int insert_slot(matcha_dev *dev, struct matcha_table *t, const struct path *p, unsigned i,
		       unsigned pos, const uint8_t *key, uint32_t ptr, bool has_result)
{
	struct lpm_tree *tree = shadow(t);
	struct node_buf b, right;
	uint32_t x = p->node[i], y = 0;
	int rc;
	load(t, i, x, &b);
	insert_at(t, &b, pos, key, ptr, has_result);
	if (b.count <= tree->fanout)
		return write_node(dev, t, i, x, &b);
	if (i == 0)
		return matcha_fail(dev, MATCHA_ENOSPC, "LPM table %u: the root is full, which the "
				   "table's size should rule out", t->index);
	unsigned keep = (tree->fanout + 2) / 2;
	right.count = 0;
	append(t, &right, &b, keep, b.count - keep);
	if ((rc = alloc_node(dev, t, i, &y)) || (rc = write_node(dev, t, i, y, &right)))
		return rc;
	if (i == tree->root) {
		/* The single-slot node above becomes the root, with both halves. */
		struct node_buf up;
		load(t, i - 1, p->node[i - 1], &up);
		insert_at(t, &up, 1, right.key[0], y, false);
		if ((rc = write_node(dev, t, i - 1, p->node[i - 1], &up)))
			return rc;
		tree->root = i - 1;
	} else if ((rc = insert_slot(dev, t, p, i - 1, p->idx[i - 1] + 1, right.key[0], y, false))) {
		return rc;
	}
	b.count = keep;
	return write_node(dev, t, i, x, &b);
}

/*
 * Restores the fill of the path's node at level i after it lost a slot. A node below the
 * root with fewer than ceil(F/2) slots merges with a sibling (the survivor grows first,
 * then the parent drops the other, which is freed once the lookups the parent sent there
 * drained) or, when both would not fit one node, borrows from it (the borrower grows
 * first, then the parent moves the separator, then the lender shrinks). A root with one
 * child hands the root to it.
 */
static int rebalance(matcha_dev *dev, struct matcha_table *t, const struct path *p, unsigned i)
{
	struct lpm_tree *tree = shadow(t);
	uint32_t x = p->node[i];
	unsigned count = tree->level[i].count[x];
	int rc;
	if (i == tree->root) {
		if (i + 1 < tree->levels && count == 1)
			tree->root = i + 1;
		return 0;
	}
	if (count >= tree->half)
		return 0;
	uint32_t parent = p->node[i - 1];
	unsigned k = p->idx[i - 1];
	struct node_buf pb, xb, sb;
	load(t, i - 1, parent, &pb);
	load(t, i, x, &xb);
	/* A node's first key is its parent's separator for it. */
	if (k > 0) {
		uint32_t left = pb.ptr[k - 1];
		load(t, i, left, &sb);
		if (sb.count + xb.count <= tree->fanout) {
			append(t, &sb, &xb, 0, xb.count);
			remove_at(t, &pb, k, 1);
			if ((rc = write_node(dev, t, i, left, &sb)) ||
			    (rc = write_node(dev, t, i - 1, parent, &pb)))
				return rc;
			free_node(t, i, x);
			return rebalance(dev, t, p, i - 1);
		}
		unsigned m = tree->half - xb.count;
		struct node_buf nb = { 0 };
		append(t, &nb, &sb, sb.count - m, m);
		append(t, &nb, &xb, 0, xb.count);
		memcpy(pb.key[k], nb.key[0], t->key_bytes);
		sb.count -= m;
		return (rc = write_node(dev, t, i, x, &nb)) ||
		       (rc = write_node(dev, t, i - 1, parent, &pb)) ||
		       (rc = write_node(dev, t, i, left, &sb)) ? rc : 0;
	}
	uint32_t right = pb.ptr[1];
	load(t, i, right, &sb);
	if (xb.count + sb.count <= tree->fanout) {
		append(t, &xb, &sb, 0, sb.count);
		remove_at(t, &pb, 1, 1);
		if ((rc = write_node(dev, t, i, x, &xb)) ||
		    (rc = write_node(dev, t, i - 1, parent, &pb)))
			return rc;
		free_node(t, i, right);
		return rebalance(dev, t, p, i - 1);
	}
	unsigned m = tree->half - xb.count;
	append(t, &xb, &sb, 0, m);
	remove_at(t, &sb, 0, m);
	memcpy(pb.key[1], sb.key[0], t->key_bytes);
	return (rc = write_node(dev, t, i, x, &xb)) ||
	       (rc = write_node(dev, t, i - 1, parent, &pb)) ||
	       (rc = write_node(dev, t, i, right, &sb)) ? rc : 0;
}

/* --------------------------------------------------------------------- boundaries */

/* The longest prefix in the set that covers `key` and is at most `below` - 1 long. */
static uint32_t longest_cover(const struct matcha_table *t, const uint8_t *key, unsigned below)
{
	uint8_t p[MATCHA_MAX_KEY_BYTES];
	for (unsigned len = below; len-- > 0;) {
		memcpy(p, key, t->key_bytes);
		truncate_prefix(p, t->key_bytes, t->info.key_bits, len);
		uint32_t r = prefix_find(t, p, len);
		if (r != NO_RESULT)
			return r;
	}
	return NO_RESULT;
}

/* Whether some prefix of the set starts or ends at `b` (key 0 always is a boundary). */
static bool boundary_needed(const struct matcha_table *t, const uint8_t *b)
{
	unsigned k = t->info.key_bits, tz = trailing_zeros(b, t->key_bytes, k);
	if (tz == k)
		return true;
	uint8_t q[MATCHA_MAX_KEY_BYTES];
	/* p/len starts at b when b has no bit set beyond len; q/len ends at b when q = b - 2^(K-len). */
	for (unsigned len = k - tz; len <= k; len++) {
		if (prefix_find(t, b, len) != NO_RESULT)
			return true;
		memcpy(q, b, t->key_bytes);
		if (len > 0 && step_key(q, t->key_bytes, k, k - len, true) && prefix_find(t, q, len) != NO_RESULT)
			return true;
	}
	return false;
}

/* Makes `b` a boundary: its interval answers as the one it is cut from. */
static int add_boundary(matcha_dev *dev, struct matcha_table *t, const uint8_t *b)
{
	struct lpm_tree *tree = shadow(t);
	struct path p;
	unsigned leaf = tree->levels - 1;
	descend(t, b, &p);
	unsigned j = p.idx[leaf];
	if (!key_cmp(t, slot_key(t, leaf, p.node[leaf], j), b))
		return 0;
	size_t s = slot_at(tree, p.node[leaf], j);
	return insert_slot(dev, t, &p, leaf, j + 1, b, tree->level[leaf].ptr[s],
			   tree->level[leaf].has_result[s]);
}

/*
 * Drops boundary `b`, whose interval answers as its left neighbour. As a leaf's first key
 * it is also the separator of the deepest ancestor that reaches it by a slot other than its
 * first: that separator moves to the next boundary first, sending [b, next) to the left
 * neighbour, and only then do the nodes below follow.
 */
static int drop_boundary(matcha_dev *dev, struct matcha_table *t, const uint8_t *b)
{
	struct lpm_tree *tree = shadow(t);
	struct path p;
	struct node_buf nb;
	unsigned leaf = tree->levels - 1;
	int rc;
	descend(t, b, &p);
	unsigned j = p.idx[leaf];
	if (key_cmp(t, slot_key(t, leaf, p.node[leaf], j), b))
		return 0;
	if (j == 0) {
		unsigned top = leaf;
		while (top-- > 0 && p.idx[top] == 0)
			;
		if (top >= leaf || tree->level[leaf].count[p.node[leaf]] < 2)
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: the tree's shadow is "
					   "inconsistent at a boundary it drops", t->index);
		uint8_t next[MATCHA_MAX_KEY_BYTES];
		memcpy(next, slot_key(t, leaf, p.node[leaf], 1), t->key_bytes);
		for (unsigned i = top; i < leaf; i++) {
			load(t, i, p.node[i], &nb);
			memcpy(nb.key[p.idx[i]], next, t->key_bytes);
			if ((rc = write_node(dev, t, i, p.node[i], &nb)))
				return rc;
		}
	}
	load(t, leaf, p.node[leaf], &nb);
	remove_at(t, &nb, j, 1);
	if ((rc = write_node(dev, t, leaf, p.node[leaf], &nb)))
		return rc;
	return rebalance(dev, t, &p, leaf);
}

/*
 * Rewrites the answers of the intervals in [s, e) (e NULL: to the top of the key space),
 * leaf by leaf: `change` gives a slot's new answer from its old one.
 */
static int set_answers(matcha_dev *dev, struct matcha_table *t, const uint8_t *s, const uint8_t *e,
		       uint32_t (*change)(const struct matcha_table *, uint32_t, const void *),
		       const void *arg)
{
	struct lpm_tree *tree = shadow(t);
	unsigned leaf = tree->levels - 1;
	uint8_t at[MATCHA_MAX_KEY_BYTES];
	memcpy(at, s, t->key_bytes);
	for (;;) {
		struct path p;
		struct node_buf nb;
		bool changed = false;
		int rc;
		descend(t, at, &p);
		load(t, leaf, p.node[leaf], &nb);
		for (unsigned j = 0; j < nb.count; j++) {
			if (key_cmp(t, nb.key[j], s) < 0 || (e && key_cmp(t, nb.key[j], e) >= 0))
				continue;
			uint32_t was = nb.has_result[j] ? nb.ptr[j] : NO_RESULT;
			uint32_t now = change(t, was, arg);
			if (now != was) {
				nb.has_result[j] = now != NO_RESULT;
				nb.ptr[j] = now == NO_RESULT ? 0 : now;
				changed = true;
			}
		}
		if (changed && (rc = write_node(dev, t, leaf, p.node[leaf], &nb)))
			return rc;
		/* The next leaf's first key: the separator after the path's slot, deepest first. */
		unsigned i = leaf;
		while (i-- > 0 && p.idx[i] + 1 >= tree->level[i].count[p.node[i]])
			;
		if (i >= leaf)
			return 0;
		memcpy(at, slot_key(t, i, p.node[i], p.idx[i] + 1), t->key_bytes);
		if (e && key_cmp(t, at, e) >= 0)
			return 0;
	}
}

/* An added prefix (result *arg) answers where it is longer than the answer so far. */
static uint32_t take_longer(const struct matcha_table *t, uint32_t was, const void *arg)
{
	uint32_t r = *(const uint32_t *)arg;
	return was == NO_RESULT || shadow(t)->len[was] < shadow(t)->len[r] ? r : was;
}

/* A deleted prefix (arg[0]) gives its intervals to the longest shorter one (arg[1]). */
static uint32_t fall_back(const struct matcha_table *t, uint32_t was, const void *arg)
{
	const uint32_t *r = arg;
	(void)t;
	return was == r[0] ? r[1] : was;
}

/* ------------------------------------------------------------------ setup, teardown */

/* Whether a READ of `index` is in range: how the node count of a level is found. */
static int index_exists(matcha_dev *dev, struct matcha_table *t, uint32_t index, bool *exists)
{
	int rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, index);
	*exists = rc == 0;
	return rc == MATCHA_EHW ? 0 : rc;
}

/* Nodes of a level: the end of its index range (a binary search with READ). */
static int probe_level_nodes(matcha_dev *dev, struct matcha_table *t, unsigned level,
			     uint32_t *nodes)
{
	uint32_t lo = 0, hi = MAX_LEVEL_NODES; /* index lo-1 exists, index hi does not */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		bool exists;
		int rc = index_exists(dev, t, lpm_index(level, mid), &exists);
		if (rc)
			return rc;
		if (exists)
			lo = mid + 1;
		else
			hi = mid;
	}
	*nodes = lo;
	return 0;
}

/* The empty tree, as CLEAR leaves the hardware: node 0 of every level one slot (key 0),
 * each pointing at node 0 below, the leaf's answering a miss; the root is the leaf. */
static void reset_tree(struct matcha_table *t)
{
	struct lpm_tree *tree = shadow(t);
	for (unsigned i = 0; i < tree->levels; i++) {
		struct lpm_level *lv = &tree->level[i];
		size_t slots = (size_t)lv->nodes * tree->fanout;
		memset(lv->count, 0, lv->nodes * sizeof *lv->count);
		memset(lv->key, 0, slots * t->key_bytes);
		memset(lv->ptr, 0, slots * sizeof *lv->ptr);
		memset(lv->has_result, 0, slots);
		lv->count[0] = 1;
		lv->nfree = 0;
		for (unsigned n = lv->nodes; n-- > 1;)
			lv->free_nodes[lv->nfree++] = n;
	}
	tree->root = tree->levels - 1;
	tree->held = 0;
	stop_loading(tree);
	tree->nfree_results = 0;
	for (unsigned r = tree->results; r-- > 0;)
		tree->free_results[tree->nfree_results++] = r;
	for (unsigned b = 0; b < tree->nbuckets; b++)
		tree->buckets[b] = NO_RESULT;
}

static void release(struct matcha_table *t)
{
	struct lpm_tree *tree = shadow(t);
	if (!tree)
		return;
	for (unsigned i = 0; tree->level && i < tree->levels; i++) {
		free(tree->level[i].count);
		free(tree->level[i].key);
		free(tree->level[i].ptr);
		free(tree->level[i].has_result);
		free(tree->level[i].free_nodes);
	}
	free(tree->level);
	free(tree->prefix);
	free(tree->len);
	free(tree->free_results);
	free(tree->buckets);
	stop_loading(tree);
	free(tree);
	t->state = NULL;
}

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	const struct matcha_table_info *in = &t->info;
	t->info.levels = w[MATCHA_HW_DESC_GEOMETRY_WORD];
	t->info.prefix_store = w[MATCHA_HW_DESC_KIND_WORD] & MATCHA_HW_KIND_PREFIX_STORE;
	uint32_t extra = w[MATCHA_HW_DESC_EXTRA_WORD];
	unsigned levels = in->levels, fanout = extra & MATCHA_HW_LPM_EXTRA_FANOUT_MASK;
	unsigned pointer_bits = extra >> MATCHA_HW_LPM_EXTRA_POINTER_SHIFT & MATCHA_HW_LPM_EXTRA_FIELD_MASK;
	unsigned memory_levels = extra >> MATCHA_HW_LPM_EXTRA_MEMORY_SHIFT & MATCHA_HW_LPM_EXTRA_FIELD_MASK;
	int rc;

	if (levels == 0 || levels > MAX_LEVELS)
		return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: %u tree levels, the driver "
				   "walks 1 to %d", t->index, levels, MAX_LEVELS);
	if (pointer_bits < MATCHA_HW_LPM_MIN_POINTER_BITS || pointer_bits > MAX_POINTER_BITS)
		return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: %u-bit pointers, not %u to %u",
				   t->index, pointer_bits, MATCHA_HW_LPM_MIN_POINTER_BITS,
				   MAX_POINTER_BITS);
	if (memory_levels >= levels)
		return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: %u of its %u levels in memory "
				   "(the root stays on chip)", t->index, memory_levels, levels);
	if (fanout < 3 || fanout * slot_bits(pointer_bits, in->key_bits) > MATCHA_HW_WIN_STAGING_WORDS * 32)
		return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: %u-slot nodes of %u-bit keys "
				   "are not 3 or more slots in %u DATA bits", t->index, fanout,
				   in->key_bits, MATCHA_HW_WIN_STAGING_WORDS * 32);
	uint32_t max_pointer = MAX_LEVEL_NODES < 1u << pointer_bits ? MAX_LEVEL_NODES : 1u << pointer_bits;
	if (in->size == 0 || in->size > max_pointer)
		return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: %u results, result indices "
				   "reach %u", t->index, in->size, max_pointer);

	struct lpm_tree *tree = calloc(1, sizeof *tree);
	if (!tree)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for LPM table %u", t->index);
	t->state = tree;
	tree->levels = levels;
	tree->fanout = fanout;
	tree->pointer_bits = pointer_bits;
	tree->memory_levels = memory_levels;
	tree->half = div_ceil(fanout, 2);
	tree->node_words = div_ceil(fanout * slot_bits(pointer_bits, in->key_bits), 32);
	tree->results = in->size;
	for (tree->nbuckets = 2; tree->nbuckets < 2 * tree->results;)
		tree->nbuckets *= 2;
	tree->level = calloc(levels, sizeof *tree->level);
	tree->prefix = calloc(tree->results, t->key_bytes);
	tree->len = calloc(tree->results, sizeof *tree->len);
	tree->free_results = calloc(tree->results, sizeof *tree->free_results);
	tree->buckets = calloc(tree->nbuckets, sizeof *tree->buckets);
	if (!tree->level || !tree->prefix || !tree->len || !tree->free_results || !tree->buckets)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for LPM table %u", t->index);

	for (unsigned i = 0; i < levels; i++) {
		struct lpm_level *lv = &tree->level[i];
		uint32_t nodes;
		if ((rc = probe_level_nodes(dev, t, i, &nodes)))
			return rc;
		if (nodes == 0 || nodes > max_pointer || (i == 0 && nodes != 1))
			return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: level %u has %u nodes "
					   "(the root level has 1, the others 1 to %u)", t->index,
					   i, (unsigned)nodes, max_pointer);
		lv->nodes = nodes;
		size_t slots = (size_t)nodes * fanout;
		lv->count = calloc(nodes, sizeof *lv->count);
		lv->key = calloc(slots, t->key_bytes);
		lv->ptr = calloc(slots, sizeof *lv->ptr);
		lv->has_result = calloc(slots, 1);
		lv->free_nodes = calloc(nodes, sizeof *lv->free_nodes);
		if (!lv->count || !lv->key || !lv->ptr || !lv->has_result || !lv->free_nodes)
			return matcha_fail(dev, MATCHA_ENOMEM, "no memory for LPM table %u", t->index);
	}
	/* The result range ends where the last level's does. */
	uint32_t results;
	if ((rc = probe_level_nodes(dev, t, levels, &results)))
		return rc;
	if (results != in->size)
		return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: %u results in the window, "
				   "the descriptor says %u", t->index, (unsigned)results, in->size);
	reset_tree(t);
	return 0;
}

/* ------------------------------------------------------------------- add, delete */

/* Checks a caller's prefix and copies it into canonical form. */
static int canonical_prefix(matcha_dev *dev, struct matcha_table *t, const char *op,
			    const uint8_t *prefix, unsigned len, uint8_t *canon)
{
	if (len > t->info.key_bits)
		return matcha_fail(dev, MATCHA_E2BIG, "%s: prefix length %u, table %u has %u-bit "
				   "keys", op, len, t->index, t->info.key_bits);
	if (!prefix)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: prefix pointer is NULL", op);
	memcpy(canon, prefix, t->key_bytes);
	truncate_prefix(canon, t->key_bytes, t->info.key_bits, len);
	/* Reject rather than mask, as `ip route` and P4Runtime do: a set bit there is a typo. */
	if (memcmp(canon, prefix, t->key_bytes))
		return matcha_fail(dev, MATCHA_EINVAL, "%s: prefix has bits set beyond its length "
				   "%u (or above the %u-bit key)", op, len, t->info.key_bits);
	return 0;
}

/* The result of a prefix the call needs in the table, the prefix in canonical form in
 * `canon`; `op` names the call. */
static int present_result(matcha_dev *dev, struct matcha_table *t, const char *op,
			  const uint8_t *prefix, unsigned len, uint8_t *canon, uint32_t *r)
{
	if (shadow(t)->loading)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: table %u is being loaded, its prefixes "
				   "are not in the hardware yet (matcha_lpm_load_end)", op, t->index);
	int rc = canonical_prefix(dev, t, op, prefix, len, canon);
	if (rc)
		return rc;
	*r = prefix_find(t, canon, len);
	if (*r == NO_RESULT)
		return matcha_fail(dev, MATCHA_ENOENT, "%s: the /%u prefix is not in table %u", op,
				   len, t->index);
	return 0;
}

/*
 * Writes result r. On hardware with a prefix store the WRITE also keeps the staged KEY and
 * PRIORITY as the result's prefix and length, so the prefix is staged with every valid
 * result (adds and modifies); an invalidated result's prefix is never read.
 */
static int write_result(matcha_dev *dev, struct matcha_table *t, uint32_t r, uint32_t flags,
			const uint32_t *data)
{
	uint32_t prefix[MATCHA_HW_WIN_STAGING_WORDS];
	bool store = t->info.prefix_store && (flags & MATCHA_HW_FLAGS_VALID);
	if (store)
		matcha_be_to_words(prefix_at(t, r), t->key_bytes, prefix, t->key_words);
	struct staged_entry e = {
		.flags = flags,
		.key = store ? prefix : NULL,
		.data = t->data_words ? data : NULL,
		.data_words = t->data_words,
		.has_priority = store,
		.priority = store ? shadow(t)->len[r] : 0,
	};
	return matcha_window_write(dev, t, lpm_index(shadow(t)->levels, r), &e);
}

static int add(matcha_dev *dev, struct matcha_table *t, const uint8_t *prefix,
	       unsigned prefix_len, uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES], end[MATCHA_MAX_KEY_BYTES];
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS];
	unsigned table = t->index;
	int rc;

	if ((rc = canonical_prefix(dev, t, "lpm_add", prefix, prefix_len, canon)) ||
	    (rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)))
		return rc;

	struct lpm_tree *tree = shadow(t);
	if (prefix_find(t, canon, prefix_len) != NO_RESULT)
		return matcha_fail(dev, MATCHA_EEXIST, "lpm_add: the /%u prefix is already in "
				   "table %u", prefix_len, table);
	if (tree->nfree_results == 0)
		return matcha_fail(dev, MATCHA_ENOSPC, "lpm_add: table %u is full, it holds its %u "
				   "prefixes", table, tree->results);

	uint32_t r = tree->free_results[--tree->nfree_results];
	memcpy(tree->prefix + (size_t)r * t->key_bytes, canon, t->key_bytes);
	tree->len[r] = (uint16_t)prefix_len;
	prefix_insert(t, r);
	tree->held++;
	if (tree->loading) {
		tree->load_action[r] = action_id;
		memcpy(tree->load_data + (size_t)r * t->data_words, data_words,
		       t->data_words * sizeof *data_words);
		return 0;
	}
	bool bounded = prefix_end(t, canon, prefix_len, end);
	/* The result (its counters zeroed first) before anything points at it; the prefix's
	 * boundaries, each keeping every answer; then its intervals, leaf by leaf. */
	if ((rc = matcha_counter_zero(dev, t, r)) ||
	    (rc = write_result(dev, t, r, MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id), data_words)) ||
	    (rc = add_boundary(dev, t, canon)) ||
	    (bounded && (rc = add_boundary(dev, t, end))))
		return rc;
	return set_answers(dev, t, canon, bounded ? end : NULL, take_longer, &r);
}

static int delete(matcha_dev *dev, struct matcha_table *t, const uint8_t *prefix,
		  unsigned prefix_len)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES], end[MATCHA_MAX_KEY_BYTES];
	uint32_t r;
	int rc;

	if ((rc = present_result(dev, t, "lpm_delete", prefix, prefix_len, canon, &r)))
		return rc;
	struct lpm_tree *tree = shadow(t);
	bool bounded = prefix_end(t, canon, prefix_len, end);

	/* Its intervals fall back to the longest shorter prefix over it (one prefix for all of
	 * them: each covers the whole of this one). */
	uint32_t change[2] = { r, longest_cover(t, canon, prefix_len) };
	if ((rc = set_answers(dev, t, canon, bounded ? end : NULL, fall_back, change)))
		return rc;
	prefix_remove(t, r);
	tree->held--;
	/* Boundaries no other prefix starts or ends at now cut nothing. */
	if ((!boundary_needed(t, canon) && (rc = drop_boundary(dev, t, canon))) ||
	    (bounded && !boundary_needed(t, end) && (rc = drop_boundary(dev, t, end))))
		return rc;
	/* The result last, once nothing points at it. */
	if ((rc = write_result(dev, t, r, 0, NULL)))
		return rc;
	tree->free_results[tree->nfree_results++] = r;
	return 0;
}

int matcha_lpm_counters(matcha_dev *dev, unsigned table, const uint8_t *prefix,
			unsigned prefix_len, uint64_t *packets, uint64_t *bytes, unsigned flags)
{
	struct matcha_table *t;
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	uint32_t r;
	int rc;

	if ((rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_counters", &t)) ||
	    (rc = matcha_counters_check(dev, t, "lpm_counters")) ||
	    (rc = present_result(dev, t, "lpm_counters", prefix, prefix_len, canon, &r)))
		return rc;
	return matcha_counter_entry(dev, t, r, packets, bytes, flags);
}

static int modify(matcha_dev *dev, struct matcha_table *t, const uint8_t *prefix,
		  unsigned prefix_len, uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS], r;
	int rc;

	if ((rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)) ||
	    (rc = present_result(dev, t, "lpm_modify", prefix, prefix_len, canon, &r)))
		return rc;
	/* One WRITE of the result: the leaf slots pointing at it stay as they are. */
	return write_result(dev, t, r, MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id), data_words);
}

int matcha_lpm_add(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		   unsigned prefix_len, uint8_t action_id, const uint8_t *data,
		   unsigned data_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_add", &t);
	return rc ? rc : add(dev, t, prefix, prefix_len, action_id, data, data_bits);
}

int matcha_lpm_delete(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		      unsigned prefix_len)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_delete", &t);
	return rc ? rc : delete(dev, t, prefix, prefix_len);
}

int matcha_lpm_modify(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		      unsigned prefix_len, uint8_t action_id, const uint8_t *data,
		      unsigned data_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_modify", &t);
	return rc ? rc : modify(dev, t, prefix, prefix_len, action_id, data, data_bits);
}

int matcha_lpm_read(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		    unsigned prefix_len, uint32_t *result, struct matcha_entry *entry)
{
	struct matcha_table *t;
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	uint32_t r;
	int rc;

	if ((rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_read", &t)) ||
	    (rc = present_result(dev, t, "lpm_read", prefix, prefix_len, canon, &r)))
		return rc;
	if (result)
		*result = r;
	if ((rc = matcha_window_read(dev, t, matcha_window_index(t, r), entry)))
		return rc;
	/* A result holds no key: the prefix is the shadow's. */
	memcpy(entry->key, canon, t->key_bytes);
	return 0;
}

/* ------------------------------------------------------------------- loading at once */

/*
 * A load fills an empty table with one tree built from its whole prefix set: the leaves
 * hold the boundaries in order, each with the longest prefix covering it, and every level
 * spreads its slots evenly over the fewest nodes (so each node below the root holds at
 * least ceil(F/2)). The results are written first, then the tree's nodes from the leaves
 * up, all of them fresh nodes no lookup reaches, and the root level's one node last: a
 * lookup sees the empty tree before that WRITE and the whole table after it. The empty
 * tree's path is free then.
 */

/* A held prefix, for the sweep that gives each boundary its answer. */
struct load_prefix {
	uint8_t start[MATCHA_MAX_KEY_BYTES]; /* canonical, zero beyond key_bytes */
	unsigned len;
	uint32_t r;
};

/* A key of the build, zero beyond key_bytes so that whole keys compare. */
typedef uint8_t load_key[MATCHA_MAX_KEY_BYTES];

static int by_start_then_length(const void *a, const void *b)
{
	const struct load_prefix *x = a, *y = b;
	int c = memcmp(x->start, y->start, MATCHA_MAX_KEY_BYTES);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int by_key(const void *a, const void *b)
{
	return memcmp(a, b, MATCHA_MAX_KEY_BYTES);
}

/*
 * The boundaries of the prefixes `pf` in order (key 0 first) in `bound`, each with its
 * interval's answer; returns how many. Prefixes nest or are disjoint, so those covering a
 * boundary form a stack: the ones ending at or before it leave, the ones starting at it
 * enter, shortest first, and the top answers.
 */
static size_t load_boundaries(const struct matcha_table *t, struct load_prefix *pf, size_t n,
			      load_key *bound, uint32_t *answer)
{
	struct {
		load_key end;
		bool bounded;
		uint32_t r;
	} stack[MATCHA_MAX_KEY_BYTES * 8 + 1];
	size_t m = 0, u = 0, depth = 0, next = 0;
	memset(bound[m++], 0, sizeof *bound);
	for (size_t k = 0; k < n; k++) {
		memcpy(bound[m++], pf[k].start, sizeof *bound);
		memset(bound[m], 0, sizeof *bound);
		m += prefix_end(t, pf[k].start, pf[k].len, bound[m]);
	}
	qsort(bound, m, sizeof *bound, by_key);
	for (size_t k = 0; k < m; k++)
		if (u == 0 || memcmp(bound[u - 1], bound[k], sizeof *bound))
			memcpy(bound[u++], bound[k], sizeof *bound);
	qsort(pf, n, sizeof *pf, by_start_then_length);
	for (size_t k = 0; k < u; k++) {
		while (depth && stack[depth - 1].bounded &&
		       memcmp(stack[depth - 1].end, bound[k], sizeof *bound) <= 0)
			depth--;
		for (; next < n && !memcmp(pf[next].start, bound[k], sizeof *bound); next++) {
			memset(stack[depth].end, 0, sizeof stack[depth].end);
			stack[depth].bounded = prefix_end(t, pf[next].start, pf[next].len, stack[depth].end);
			stack[depth++].r = pf[next].r;
		}
		answer[k] = depth ? stack[depth - 1].r : NO_RESULT;
	}
	return u;
}

/* Slot `j`'s first of `count` slots spread evenly over `nodes` nodes. */
static size_t share_first(size_t count, size_t nodes, size_t j)
{
	return j * (count / nodes) + (j < count % nodes ? j : count % nodes);
}

/*
 * Writes the held prefixes' results and the tree over the boundaries `bound` (answers
 * `answer`, m of them). `row` has room for a node per F boundaries: each level's nodes,
 * their first keys and ids, for the level above.
 */
static int load_tree(matcha_dev *dev, struct matcha_table *t, load_key *bound,
		     const uint32_t *answer, size_t m, load_key *row_key, uint32_t *row_id,
		     bool *wrote)
{
	struct lpm_tree *tree = shadow(t);
	unsigned leaf = tree->levels - 1, fanout = tree->fanout, root = leaf;
	size_t nodes[MAX_LEVELS];
	uint32_t old[MAX_LEVELS];
	struct node_buf b, top;
	int rc;

	/* The levels' node counts and the root's level; fresh nodes for all but level 0. */
	nodes[leaf] = div_ceil(m, fanout);
	while (nodes[root] > 1 && root > 0) {
		root--;
		nodes[root] = div_ceil(nodes[root + 1], fanout);
	}
	/* The table's levels hold this tree beside the empty one's path: every level below
	 * the root has a node more than the tree of fullest nodes needs (alloc_node). */
	if (nodes[root] > 1)
		return matcha_fail(dev, MATCHA_ENOSPC, "LPM table %u: %zu boundaries need more "
				   "than its %u levels, which the table's size should rule out",
				   t->index, m, tree->levels);
	old[0] = 0;
	for (unsigned i = 1; i < tree->levels; i++)
		old[i] = tree->level[i - 1].ptr[slot_at(tree, old[i - 1], 0)];

	*wrote = true;
	for (uint32_t r = 0; r < tree->results; r++)
		if (prefix_find(t, prefix_at(t, r), tree->len[r]) == r &&
		    ((rc = matcha_counter_zero(dev, t, r)) ||
		     (rc = write_result(dev, t, r, MATCHA_HW_FLAGS_VALID |
					FLAGS_ACTION(tree->load_action[r]),
					tree->load_data + (size_t)r * t->data_words))))
			return rc;

	/* From the leaves up to the root's level; the level-0 node waits for the end. */
	size_t count = m;
	for (unsigned i = leaf;; i--) {
		for (size_t j = 0; j < nodes[i]; j++) {
			size_t from = share_first(count, nodes[i], j), to = share_first(count, nodes[i], j + 1);
			struct node_buf *nb = i ? &b : &top;
			nb->count = 0;
			for (size_t k = from; k < to; k++)
				if (i == leaf)
					insert_at(t, nb, nb->count, bound[k], answer[k] == NO_RESULT ? 0 : answer[k],
						  answer[k] != NO_RESULT);
				else
					insert_at(t, nb, nb->count, row_key[k], row_id[k], false);
			uint32_t id = 0;
			if (i && ((rc = alloc_node(dev, t, i, &id)) || (rc = write_node(dev, t, i, id, nb))))
				return rc;
			/* Level i's nodes replace the level below's in the row, in order. */
			memcpy(row_key[j], nb->key[0], sizeof *row_key);
			row_id[j] = id;
		}
		count = nodes[i];
		if (i == root)
			break;
	}
	/* Single-slot nodes above the root, up to level 1, then level 0's over them. */
	for (unsigned i = root; i-- > 0;) {
		struct node_buf *nb = i ? &b : &top;
		nb->count = 0;
		insert_at(t, nb, 0, row_key[0], row_id[0], false);
		uint32_t id = 0;
		if (i && ((rc = alloc_node(dev, t, i, &id)) || (rc = write_node(dev, t, i, id, nb))))
			return rc;
		row_id[0] = id;
	}
	if ((rc = write_node(dev, t, 0, 0, &top)))
		return rc;
	tree->root = root;
	for (unsigned i = 1; i < tree->levels; i++)
		free_node(t, i, old[i]);
	return 0;
}

/* The LPM table `table` for `op`, which needs a load under way (`loading`) or none. */
static int load_table(matcha_dev *dev, unsigned table, const char *op, bool loading,
		      struct matcha_table **t)
{
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, op, t);
	if (rc)
		return rc;
	if (shadow(*t)->loading != loading)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: table %u is %s", op, table,
				   loading ? "not being loaded" : "being loaded already");
	return 0;
}

int matcha_lpm_load_begin(matcha_dev *dev, unsigned table)
{
	struct matcha_table *t;
	int rc = load_table(dev, table, "lpm_load_begin", false, &t);
	if (rc)
		return rc;
	struct lpm_tree *tree = shadow(t);
	if (tree->held)
		return matcha_fail(dev, MATCHA_EEXIST, "lpm_load_begin: table %u holds %u prefixes; "
				   "a load fills an empty table", table, tree->held);
	tree->load_action = calloc(tree->results, sizeof *tree->load_action);
	tree->load_data = calloc((size_t)tree->results * (t->data_words ? t->data_words : 1),
				 sizeof *tree->load_data);
	if (!tree->load_action || !tree->load_data) {
		stop_loading(tree);
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory to load LPM table %u", table);
	}
	tree->loading = true;
	return 0;
}

int matcha_lpm_load_end(matcha_dev *dev, unsigned table)
{
	struct matcha_table *t;
	int rc = load_table(dev, table, "lpm_load_end", true, &t);
	if (rc)
		return rc;
	struct lpm_tree *tree = shadow(t);
	size_t n = tree->held, bounds = 2 * n + 1;
	struct load_prefix *pf = calloc(n ? n : 1, sizeof *pf);
	load_key *bound = calloc(bounds, sizeof *bound), *row_key = calloc(bounds / tree->fanout + 1, sizeof *row_key);
	uint32_t *answer = calloc(bounds, sizeof *answer), *row_id = calloc(bounds / tree->fanout + 1, sizeof *row_id);
	bool wrote = false;
	if (!pf || !bound || !row_key || !answer || !row_id) {
		rc = matcha_fail(dev, MATCHA_ENOMEM, "no memory to load LPM table %u", table);
	} else if (n) {
		size_t k = 0;
		for (uint32_t r = 0; r < tree->results; r++)
			if (prefix_find(t, prefix_at(t, r), tree->len[r]) == r) {
				memcpy(pf[k].start, prefix_at(t, r), t->key_bytes);
				pf[k].len = tree->len[r];
				pf[k++].r = r;
			}
		size_t m = load_boundaries(t, pf, n, bound, answer);
		rc = load_tree(dev, t, bound, answer, m, row_key, row_id, &wrote);
	}
	free(pf);
	free(bound);
	free(row_key);
	free(answer);
	free(row_id);
	/* Nothing written: the load goes on, to end again or be cleared. Half written: the
	 * hardware is neither table, and only a clear starts it over. */
	if (rc && !wrote)
		return rc;
	stop_loading(tree);
	return rc ? matcha_table_refuse(dev, t, rc) : 0;
}

/* ------------------------------------------------------------------ walks, queries */

int matcha_lpm_walk_nodes(const struct matcha_lpm_nodes *img, const uint8_t *key, uint32_t *result)
{
	uint8_t slot[MATCHA_MAX_KEY_BYTES];
	unsigned key_bytes = div_ceil(img->key_bits, 8);
	uint32_t node = 0, low = 0;
	for (unsigned i = 0; i < img->levels; i++) {
		if (node >= img->nodes[i])
			return MATCHA_EINVAL;
		const uint32_t *w = img->words[i] + (size_t)node * img->node_words;
		low = decode_slot(img->pointer_bits, img->key_bits, w, 0, slot);
		for (unsigned j = 1; j < img->fanout; j++) {
			uint32_t s = decode_slot(img->pointer_bits, img->key_bits, w, j, slot);
			if ((s & MATCHA_HW_LPM_SLOT_VALID) && memcmp(slot, key, key_bytes) <= 0)
				low = s;
		}
		node = pointer_of(low, img->pointer_bits);
	}
	if (!(low & MATCHA_HW_LPM_SLOT_HAS_RESULT))
		return MATCHA_ENOENT;
	*result = node;
	return 0;
}

int matcha_lpm_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *key,
			 uint32_t *result)
{
	struct matcha_table *t;
	struct path p;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_lookup_sw", &t);
	if (rc)
		return rc;
	const struct lpm_tree *tree = shadow(t);
	unsigned leaf = tree->levels - 1;
	descend(t, key, &p);
	size_t s = slot_at(tree, p.node[leaf], p.idx[leaf]);
	if (!tree->level[leaf].has_result[s])
		return matcha_fail(dev, MATCHA_ENOENT, "lpm_lookup_sw: no prefix of table %u matches",
				   table);
	*result = tree->level[leaf].ptr[s];
	return 0;
}

int matcha_lpm_level(matcha_dev *dev, unsigned table, unsigned level, struct matcha_lpm_level *out)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_level", &t);
	if (rc)
		return rc;
	const struct lpm_tree *tree = shadow(t);
	if (level >= tree->levels)
		return matcha_fail(dev, MATCHA_EINVAL, "lpm_level: table %u has %u levels, not %u",
				   table, tree->levels, level + 1);
	const struct lpm_level *lv = &tree->level[level];
	*out = (struct matcha_lpm_level){
		.fanout = tree->fanout,
		.nodes = lv->nodes,
		.used = lv->nodes - lv->nfree,
		.slots = 0,
		.real = level >= tree->root,
		.in_memory = level >= tree->levels - tree->memory_levels,
		.pointer_bits = tree->pointer_bits,
	};
	for (unsigned n = 0; n < lv->nodes; n++)
		out->slots += lv->count[n];
	return 0;
}

/* ---------------------------------------------------------------------- adoption */

/* What adoption has seen: which nodes the walk from the root reached. */
struct adoption {
	uint8_t *seen[MAX_LEVELS];
	uint8_t last_leaf_key[MATCHA_MAX_KEY_BYTES];
	bool any_leaf;
};

static void describe_key(const struct matcha_table *t, const uint8_t *k, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "0x");
	for (unsigned b = 0; b < t->key_bytes && o + 3 < len; b++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", k[b]);
}

/*
 * Reads node `node` of level i, whose keys lie in [lo, hi) (hi NULL: no upper end), into
 * the shadow, checks it and goes down into its children. A leaf slot must be a boundary
 * of the prefix set, answered by the longest prefix that covers it.
 */
static int adopt_node(matcha_dev *dev, struct matcha_table *t, struct adoption *ad, unsigned i,
		      uint32_t node, const uint8_t *lo, const uint8_t *hi)
{
	struct lpm_tree *tree = shadow(t);
	struct lpm_level *lv = &tree->level[i];
	uint32_t words[MATCHA_HW_WIN_STAGING_WORDS] = { 0 };
	struct node_buf nb;
	char where[160];
	int rc;
	if (ad->seen[i][node])
		return matcha_fail(dev, MATCHA_EHW, "LPM table %u: node %u of level %u is reached "
				   "twice", t->index, (unsigned)node, i);
	ad->seen[i][node] = 1;
	if ((rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, lpm_index(i, node))))
		return rc;
	for (unsigned w = 0; w < tree->node_words; w++)
		if ((rc = matcha_reg_read(dev, t->info.base + MATCHA_HW_WIN_DATA + 4 * w, &words[w])))
			return rc;
	nb.count = 0;
	for (unsigned j = 0; j < tree->fanout; j++) {
		uint32_t low = decode_slot(tree->pointer_bits, t->info.key_bits, words, j, nb.key[j]);
		if (j > 0 && !(low & MATCHA_HW_LPM_SLOT_VALID))
			break;
		nb.ptr[j] = pointer_of(low, tree->pointer_bits);
		nb.has_result[j] = i + 1 == tree->levels && (low & MATCHA_HW_LPM_SLOT_HAS_RESULT);
		nb.count++;
	}
	/* Slot 0's key is the node's lower bound (its valid bit and key are not read by
	 * lookups; CLEAR leaves them zero). */
	memcpy(nb.key[0], lo, t->key_bytes);
	for (unsigned j = 1; j < nb.count; j++)
		if (key_cmp(t, nb.key[j], nb.key[j - 1]) <= 0 || (hi && key_cmp(t, nb.key[j], hi) >= 0)) {
			describe_key(t, nb.key[j], where, sizeof where);
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: slot %u of node %u at level "
					   "%u has the key %s, out of order", t->index, j,
					   (unsigned)node, i, where);
		}
	lv->count[node] = nb.count;
	for (unsigned j = 0; j < nb.count; j++) {
		size_t s = slot_at(tree, node, j);
		memcpy(slot_key(t, i, node, j), nb.key[j], t->key_bytes);
		lv->ptr[s] = nb.ptr[j];
		lv->has_result[s] = nb.has_result[j];
	}
	for (unsigned j = 0; j < nb.count; j++) {
		if (i + 1 < tree->levels) {
			if (nb.ptr[j] >= tree->level[i + 1].nodes)
				return matcha_fail(dev, MATCHA_EHW, "LPM table %u: slot %u of node %u at "
						   "level %u points at node %u of level %u, beyond "
						   "its %u nodes", t->index, j, (unsigned)node, i,
						   (unsigned)nb.ptr[j], i + 1, tree->level[i + 1].nodes);
			if ((rc = adopt_node(dev, t, ad, i + 1, nb.ptr[j], nb.key[j],
					     j + 1 < nb.count ? nb.key[j + 1] : hi)))
				return rc;
			continue;
		}
		uint32_t want = longest_cover(t, nb.key[j], t->info.key_bits + 1);
		uint32_t have = nb.has_result[j] ? nb.ptr[j] : NO_RESULT;
		describe_key(t, nb.key[j], where, sizeof where);
		if (!boundary_needed(t, nb.key[j]))
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: the tree has the boundary "
					   "%s, where no prefix of the prefix store starts or ends",
					   t->index, where);
		if (have != want)
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: the interval from %s answers "
					   "result %d, the prefix store gives %d", t->index, where,
					   have == NO_RESULT ? -1 : (int)have,
					   want == NO_RESULT ? -1 : (int)want);
	}
	return 0;
}

/* Reads the valid results and their prefixes (KEY, PRIORITY) into the shadow's prefix set;
 * `held` lists them. */
static int adopt_results(matcha_dev *dev, struct matcha_table *t, uint32_t *held)
{
	struct lpm_tree *tree = shadow(t);
	uint32_t base = t->info.base, flags, words[MATCHA_HW_WIN_STAGING_WORDS], len;
	uint8_t prefix[MATCHA_MAX_KEY_BYTES], canon[MATCHA_MAX_KEY_BYTES];
	tree->nfree_results = 0;
	tree->held = 0;
	for (uint32_t r = tree->results; r-- > 0;) {
		int rc;
		if ((rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, lpm_index(tree->levels, r))) ||
		    (rc = matcha_reg_read(dev, base + MATCHA_HW_WIN_FLAGS, &flags)))
			return rc;
		if (!(flags & MATCHA_HW_FLAGS_VALID)) {
			tree->free_results[tree->nfree_results++] = r; /* lowest ends on top */
			continue;
		}
		if (!t->info.prefix_store)
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: result %u is in use but the "
					   "hardware keeps no prefix store (descriptor kind bit 10), "
					   "so its prefixes cannot be read back", t->index,
					   (unsigned)r);
		for (unsigned w = 0; w < t->key_words; w++)
			if ((rc = matcha_reg_read(dev, base + MATCHA_HW_WIN_KEY + 4 * w, &words[w])))
				return rc;
		if ((rc = matcha_reg_read(dev, base + MATCHA_HW_WIN_PRIORITY, &len)))
			return rc;
		matcha_words_to_be(words, t->key_words, prefix, t->key_bytes);
		memcpy(canon, prefix, t->key_bytes);
		if (len <= t->info.key_bits)
			truncate_prefix(canon, t->key_bytes, t->info.key_bits, len);
		if (len > t->info.key_bits || memcmp(canon, prefix, t->key_bytes))
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: result %u has the prefix "
					   "length %u, %s", t->index, (unsigned)r, (unsigned)len,
					   len > t->info.key_bits ? "longer than the key" :
					   "but bits set beyond it");
		uint32_t other = prefix_find(t, canon, len);
		if (other != NO_RESULT)
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: results %u and %u hold the "
					   "same /%u prefix", t->index, (unsigned)r, (unsigned)other,
					   (unsigned)len);
		memcpy(tree->prefix + (size_t)r * t->key_bytes, canon, t->key_bytes);
		tree->len[r] = (uint16_t)len;
		prefix_insert(t, r);
		held[tree->held++] = r;
	}
	return 0;
}

/* Every start and end of a held prefix must be a leaf key of the adopted tree. */
static int check_boundaries(matcha_dev *dev, struct matcha_table *t, const uint32_t *held)
{
	const struct lpm_tree *tree = shadow(t);
	unsigned leaf = tree->levels - 1;
	for (unsigned k = 0; k < tree->held; k++) {
		uint8_t b[2][MATCHA_MAX_KEY_BYTES];
		uint32_t r = held[k];
		memcpy(b[0], tree->prefix + (size_t)r * t->key_bytes, t->key_bytes);
		bool bounded = prefix_end(t, b[0], tree->len[r], b[1]);
		for (unsigned e = 0; e < 1u + bounded; e++) {
			struct path p;
			char where[160];
			descend(t, b[e], &p);
			if (key_cmp(t, slot_key(t, leaf, p.node[leaf], p.idx[leaf]), b[e])) {
				describe_key(t, b[e], where, sizeof where);
				return matcha_fail(dev, MATCHA_EHW, "LPM table %u: result %u's /%u "
						   "prefix %s at %s, which is no boundary of the tree",
						   t->index, (unsigned)r, tree->len[r],
						   e ? "ends" : "starts", where);
			}
		}
	}
	return 0;
}

/*
 * Adoption: the prefix set from the results and the prefix store, then the tree from the
 * root, each node checked (keys in order and inside its parent's range, pointers in range)
 * and each leaf slot against the prefix set; then every prefix's boundaries must be leaf
 * keys. The root is the highest node with more than one slot. Nodes the walk did not reach
 * are free.
 */
static int adopt(matcha_dev *dev, struct matcha_table *t)
{
	struct lpm_tree *tree = shadow(t);
	struct adoption ad = { 0 };
	uint32_t *held = calloc(tree->results, sizeof *held);
	uint8_t zero[MATCHA_MAX_KEY_BYTES] = { 0 };
	int rc = 0;
	for (unsigned i = 0; i < tree->levels; i++)
		if (!(ad.seen[i] = calloc(tree->level[i].nodes, 1)))
			rc = MATCHA_ENOMEM;
	if (rc || !held)
		rc = matcha_fail(dev, MATCHA_ENOMEM, "no memory to adopt LPM table %u", t->index);
	else if (!(rc = adopt_results(dev, t, held)) && !(rc = adopt_node(dev, t, &ad, 0, 0, zero, NULL)))
		rc = check_boundaries(dev, t, held);
	tree->root = tree->levels - 1;
	for (unsigned i = 0, n = 0; !rc && i + 1 < tree->levels; i++) {
		if (tree->level[i].count[n] > 1) {
			tree->root = i;
			break;
		}
		n = tree->level[i].ptr[slot_at(tree, n, 0)];
	}
	for (unsigned i = 0; i < tree->levels; i++) {
		struct lpm_level *lv = &tree->level[i];
		lv->nfree = 0;
		for (unsigned n = lv->nodes; !rc && n-- > 0;)
			if (!ad.seen[i][n]) {
				lv->count[n] = 0;
				lv->free_nodes[lv->nfree++] = n;
			}
		free(ad.seen[i]);
	}
	free(held);
	return rc;
}

static bool shadow_key(const struct matcha_table *t, uint32_t i, struct matcha_key *k)
{
	const struct lpm_tree *tree = shadow(t);
	if (i >= tree->results || prefix_find(t, prefix_at(t, i), tree->len[i]) != i)
		return false;
	memset(k, 0, sizeof *k);
	memcpy(k->value, prefix_at(t, i), t->key_bytes);
	k->prefix_len = tree->len[i];
	return true;
}

/* ------------------------------------------------------------- the kind's operations */

static int op_add(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		  uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	return add(dev, t, k->value, k->prefix_len, action_id, data, data_bits);
}

static int op_modify(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		     uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	return modify(dev, t, k->value, k->prefix_len, action_id, data, data_bits);
}

static int op_remove(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k)
{
	return delete(dev, t, k->value, k->prefix_len);
}

static int op_find(matcha_dev *dev, struct matcha_table *t, const char *op,
		   const struct matcha_key *k, uint32_t *index)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	return present_result(dev, t, op, k->value, k->prefix_len, canon, index);
}

/* Results sit behind the tree levels in the window's INDEX space. */
static uint32_t window_index(const struct matcha_table *t, uint32_t r)
{
	return lpm_index(t->info.levels, r);
}

const struct matcha_kind_ops matcha_lpm_ops = {
	.match_kinds = 1u << MATCHA_MATCH_EXACT | 1u << MATCHA_MATCH_LPM,
	.prefix = true,
	.init = init,
	.release = release,
	.reset = reset_tree,
	.adopt = adopt,
	.add = op_add,
	.modify = op_modify,
	.remove = op_remove,
	.find = op_find,
	.shadow_key = shadow_key,
	.window_index = window_index,
};
