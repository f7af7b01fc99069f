/* The containers both compiled searches use (_penguin_native.c, _forty_thieves_native.c),
 * written once: a growable array and a set of byte-string keys (a search's visited
 * positions, and Forty Thieves' sets of a beam level).
 *
 * The key set keeps each key once, in an arena (a length byte, then the bytes), and
 * finds it through an open-addressed table of key ids (linear probing): a key costs its
 * bytes plus 5 (its length byte and 32-bit offset) and 2 to 4 table slots of 8 bytes
 * (the table is kept a quarter to half full), with no allocation per key. Ids count up
 * from 0 in the order keys are added, so a caller may keep data per key in a Vec of its
 * own, indexed by id. Keys are at most KEYSET_KEY_MAX bytes (each file asserts its
 * longest key at compile time). The arena's offsets are 32-bit: an add that would pass
 * 4 GiB of keys fails as out of memory (the module raises MemoryError) instead of
 * wrapping around.
 *
 * Every function is static inline: each module compiles its own copy, and a module that
 * does not use one (only Penguin drops keys) gets no unused-function warning.
 */
#ifndef NATIVE_KEYSET_H
#define NATIVE_KEYSET_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- growable arrays ------------------------------------------------------------ */

/* An array of len items of size bytes, room for cap: {NULL, 0, 0, sizeof(T)} is empty. */
typedef struct { void *p; size_t len, cap, size; } Vec;

/* Makes room for n more items: 0, or -1 when out of memory (the array unchanged). */
static inline int vec_reserve(Vec *v, size_t n) {
    if (v->len + n <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 64;
    while (cap < v->len + n) cap *= 2;
    void *p = realloc(v->p, cap * v->size);
    if (!p) return -1;
    v->p = p;
    v->cap = cap;
    return 0;
}

static inline void vec_free(Vec *v) {
    free(v->p);
    v->p = NULL;
    v->len = v->cap = 0;
}

/* ---- the key set ------------------------------------------------------------------ */

#define KEYSET_KEY_MAX 255 /* bytes of a key, at most: its length is stored in one byte */

typedef struct {
    Vec arena;       /* uint8_t: each key as its length byte, then its bytes */
    Vec offsets;     /* uint32_t per key id: where the key starts in the arena */
    uint64_t *slots; /* 0: empty; else the hash's high 32 bits << 32 | (id + 1) */
    size_t mask;     /* slots - 1 (a power of two, less 1) */
} KeySet;

/* A 64-bit hash of n bytes, a word at a time (multiply and xor-shift), mixed at the end
 * so that both its low bits (the slot) and its high bits (the tag) vary. */
static inline uint64_t keyset_hash(const uint8_t *b, size_t n) {
    uint64_t h = 0x243F6A8885A308D3ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    memcpy(&w, b + i, n - i);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 32;
    return h;
}

/* An empty set with a table of `slots` slots (a power of two: small for the many short
 * lived sets of a Forty Thieves level, larger for a search's visited set): 0, or -1 when
 * out of memory. */
static inline int keyset_init(KeySet *k, size_t slots) {
    memset(k, 0, sizeof *k);
    k->arena.size = 1;
    k->offsets.size = sizeof(uint32_t);
    k->mask = slots - 1;
    k->slots = calloc(slots, sizeof(uint64_t));
    return k->slots ? 0 : -1;
}

static inline void keyset_free(KeySet *k) {
    vec_free(&k->arena);
    vec_free(&k->offsets);
    free(k->slots);
    k->slots = NULL;
}

static inline size_t keyset_count(const KeySet *k) { return k->offsets.len; }

/* The key of an id: its length byte, then its bytes. */
static inline const uint8_t *keyset_key(const KeySet *k, uint32_t id) {
    return (const uint8_t *)k->arena.p + ((const uint32_t *)k->offsets.p)[id];
}

/* The slot a stored key's hash starts probing at. */
static inline size_t keyset_home(const KeySet *k, uint64_t entry, size_t mask) {
    const uint8_t *key = keyset_key(k, (uint32_t)(entry & 0xffffffffu) - 1);
    return keyset_hash(key + 1, key[0]) & mask;
}

/* Doubles the table (the set stays at most half full). */
static inline int keyset_grow(KeySet *k) {
    size_t cap = (k->mask + 1) * 2;
    uint64_t *slots = calloc(cap, sizeof(uint64_t));
    if (!slots) return -1;
    for (size_t i = 0; i <= k->mask; i++) {
        uint64_t e = k->slots[i];
        if (!e) continue;
        size_t j = keyset_home(k, e, cap - 1);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = e;
    }
    free(k->slots);
    k->slots = slots;
    k->mask = cap - 1;
    return 0;
}

/* Adds the key of n bytes (n <= KEYSET_KEY_MAX) unless it is there, and says its id
 * (*id): 1 if it was new, 0 if it was there already, -1 when out of memory (the set
 * unchanged, but for a table grown). */
static inline int keyset_add(KeySet *k, const uint8_t *key, size_t n, uint32_t *id) {
    uint64_t h = keyset_hash(key, n);
    uint64_t tag = h & 0xffffffff00000000ull;
    size_t j = h & k->mask;
    for (;;) {
        uint64_t e = k->slots[j];
        if (!e) break;
        if ((e & 0xffffffff00000000ull) == tag) {
            uint32_t other = (uint32_t)(e & 0xffffffffu) - 1;
            const uint8_t *stored = keyset_key(k, other);
            if (stored[0] == n && memcmp(stored + 1, key, n) == 0) {
                *id = other;
                return 0;
            }
        }
        j = (j + 1) & k->mask;
    }
    if (k->arena.len + n + 1 > UINT32_MAX) return -1; /* 32-bit offsets: about 4 GiB of keys */
    if (vec_reserve(&k->arena, n + 1) || vec_reserve(&k->offsets, 1)) return -1;
    *id = (uint32_t)k->offsets.len;
    ((uint32_t *)k->offsets.p)[k->offsets.len++] = (uint32_t)k->arena.len;
    uint8_t *a = (uint8_t *)k->arena.p + k->arena.len;
    a[0] = (uint8_t)n;
    memcpy(a + 1, key, n);
    k->arena.len += n + 1;
    k->slots[j] = tag | (uint64_t)(*id + 1);
    if (k->offsets.len * 2 > k->mask + 1 && keyset_grow(k)) return -1;
    return 1;
}

/* Forgets the key added last (Penguin's depth-first search cuts a line at its depth
 * bound, so that a shorter line may reach the position again). Backward-shift deletion:
 * the entries after the hole move back into it when their probe passed it, so linear
 * probing finds every remaining key without tombstones. */
static inline void keyset_drop_last(KeySet *k) {
    uint32_t id = (uint32_t)k->offsets.len - 1;
    size_t j = keyset_home(k, (uint64_t)id + 1, k->mask);
    while ((uint32_t)(k->slots[j] & 0xffffffffu) != id + 1) j = (j + 1) & k->mask;
    size_t i = j;
    for (;;) {
        k->slots[i] = 0;
        size_t n = i;
        for (;;) {
            n = (n + 1) & k->mask;
            uint64_t e = k->slots[n];
            if (!e) goto done;
            size_t home = keyset_home(k, e, k->mask);
            /* may the entry at n move to the hole at i? only if its home is not in (i, n] */
            if (i <= n ? (home <= i || home > n) : (home <= i && home > n)) {
                k->slots[i] = e;
                i = n;
                break;
            }
        }
    }
done:
    k->arena.len = ((uint32_t *)k->offsets.p)[id];
    k->offsets.len--;
}

#endif /* NATIVE_KEYSET_H */
