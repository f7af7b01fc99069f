/* The wire format's per-card passes, compiled: wire.py's python_read_pile_group,
 * python_join_groups, python_pile_texts and python_move_to_json, and the engine's
 * whole-deck checks (core.holds_the_deck, core.holds_the_deck_within), answer for answer.
 *
 * wire.py and core.py stay the reference: wire.py uses these when the module is built
 * (one place decides), and tests/contract/test_wire_native.py compares both on every
 * state of random playouts of every game and on broken inputs (the same value, None or
 * exception each time). The tables (each spelling's card, each card's text, the card
 * move's action and name, the longest pile) come from wire.py, so no notation is
 * restated here. Each function reads only what it reads plainly (exact lists and tuples,
 * exact str spellings, exact small ints) and hands anything else, before it has run any
 * Python code, to the Python function it stands for: so a str subclass's __hash__, say,
 * runs exactly as it does in Python, and no list changes under this code's feet.
 *
 * Module: service.http._wire_native, one type, Codec.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <structmember.h>
#include <string.h>

/* CPython's private or unstable parts (_PyDict_NewPresized; a member descriptor's layout,
 * to read and write a slot in place) are used only when compiled against the CPython they
 * were checked on (service/private_parts.py lists them); against any other, the public
 * calls (PyDict_New, PyObject_GetAttr/SetAttr) do the same, a little slower.
 * tests/contract/test_wire_native.py also builds the module with -DCHECKED_CPYTHON=0. */
#ifndef CHECKED_CPYTHON
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define CHECKED_CPYTHON 1
#else
#define CHECKED_CPYTHON 0
#endif
#endif

#define SLOTS 64          /* every card is below this (cards.py CARD_SLOTS) */
#define MOVE_GAMES 16     /* games (by their pile references) with a move-answer table */
#define MOVE_SLOTS 1024   /* entries of one game's table (open addressing, a power of 2) */
#define MOVE_FILL 768     /* a table takes no more entries past this (3/4 full) */

/* A dict for ``size`` items, sized for them where CPython's private call was checked. */
static PyObject *new_dict(Py_ssize_t size) {
#if CHECKED_CPYTHON
    return _PyDict_NewPresized(size);
#else
    (void)size;
    return PyDict_New();
#endif
}

/* One game's answers of move_to_json, by (src, dst, count) packed in a key (0: free). */
typedef struct {
    PyObject *refs;       /* the game's ref_texts tuple (owned: its address stays its own) */
    uint32_t *keys;
    PyObject **answers;   /* owned */
    int filled;
} MoveTable;

typedef struct {
    PyObject_HEAD
    PyObject *card_codes;    /* wire.CARD_CODES: spelling -> card */
    PyObject *group_type;    /* wire.ReadPileGroup */
    /* The Python functions, for what is not read plainly. */
    PyObject *read_fallback, *texts_fallback, *deck_fallback, *move_fallback, *join_fallback, *shape_fallback;
    PyObject *card_move;     /* the card move's action name ("move") */
    long move_action;        /* the card move's action code */
    Py_ssize_t max_pile_cards;
    PyObject *codes_name;    /* "codes": the attribute of a ReadPileGroup */
    Py_ssize_t codes_offset; /* where a ReadPileGroup holds it (its slot; CHECKED_CPYTHON only) */
    PyObject *key_action, *key_from, *key_to, *key_count, *ref_texts_name;
    PyObject *card_objs[SLOTS];  /* the int objects CARD_CODES answers, by card */
    PyObject *texts[SLOTS];      /* CARD_TEXTS's text of each card, NULL for none */
    int8_t two_chars[128][128];  /* the card of each two-ASCII-character spelling, -1 none */
    MoveTable moves[MOVE_GAMES];
    int next_table;              /* the table a new game takes (round robin) */
} Codec;

static void move_table_clear(MoveTable *t) {
    if (t->answers) {
        for (int i = 0; i < MOVE_SLOTS; i++) Py_XDECREF(t->answers[i]);
    }
    PyMem_Free(t->keys);
    PyMem_Free(t->answers);
    Py_CLEAR(t->refs);
    t->keys = NULL;
    t->answers = NULL;
    t->filled = 0;
}

/* Every object a Codec holds but its tables': what Codec_init is given first, then the names it makes. */
#define GIVEN(self) \
    {&(self)->card_codes, &(self)->group_type, &(self)->read_fallback, &(self)->texts_fallback, \
     &(self)->deck_fallback, &(self)->move_fallback, &(self)->card_move, &(self)->join_fallback, \
     &(self)->shape_fallback}
#define NAMES(self) \
    {&(self)->codes_name, &(self)->key_action, &(self)->key_from, &(self)->key_to, &(self)->key_count, \
     &(self)->ref_texts_name}

static void Codec_dealloc(Codec *self) {
    PyObject **given[] = GIVEN(self), **names[] = NAMES(self);
    for (size_t i = 0; i < sizeof given / sizeof *given; i++) Py_CLEAR(*given[i]);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) Py_CLEAR(*names[i]);
    for (int i = 0; i < SLOTS; i++) {
        Py_XDECREF(self->card_objs[i]);
        Py_XDECREF(self->texts[i]);
    }
    for (int i = 0; i < MOVE_GAMES; i++) move_table_clear(&self->moves[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The value of ``obj``, an int (exactly one when ``exact``; a subclass's value is read as
 * the reference's indexing reads it), when it is in [0, limit); else -1. Read from the
 * int's one digit, without a call: this runs for every card. */
static inline Py_ssize_t small_int(PyObject *obj, Py_ssize_t limit, int exact) {
    if (exact ? !PyLong_CheckExact(obj) : !PyLong_Check(obj)) return -1;
#if PY_VERSION_HEX >= 0x030C0000
    if (!PyUnstable_Long_IsCompact((PyLongObject *)obj)) return -1;
    Py_ssize_t v = PyUnstable_Long_CompactValue((PyLongObject *)obj);
#else
    Py_ssize_t size = Py_SIZE(obj);
    if (size < 0 || size > 1) return -1;
    Py_ssize_t v = size ? (Py_ssize_t)((PyLongObject *)obj)->ob_digit[0] : 0;
#endif
    return (v >= 0 && v < limit) ? v : -1;
}

/* A card code in [0, SLOTS) when ``obj`` is one plainly (an exact int), else -1. */
static inline int plain_card(PyObject *obj) {
    return (int)small_int(obj, SLOTS, 1);
}

static PyObject *fallback(PyObject *function, PyObject *const *args, Py_ssize_t nargs) {
    return PyObject_Vectorcall(function, args, (size_t)nargs, NULL);
}

static int Codec_init(Codec *self, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"card_codes", "card_texts", "group_type", "read_fallback", "texts_fallback",
                         "deck_fallback", "move_fallback", "move_action", "card_move", "max_pile_cards",
                         "join_fallback", "shape_fallback", NULL};
    PyObject *codes, *texts, *group_type, *read_fallback, *texts_fallback, *deck_fallback, *move_fallback, *card_move;
    PyObject *join_fallback, *shape_fallback;
    long move_action;
    Py_ssize_t max_pile_cards;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!OOOOlUnOO", kw, &PyDict_Type, &codes, &PyDict_Type, &texts,
                                     &PyType_Type, &group_type, &read_fallback, &texts_fallback, &deck_fallback,
                                     &move_fallback, &move_action, &card_move, &max_pile_cards, &join_fallback,
                                     &shape_fallback))
        return -1;
    if (self->card_codes) {
        PyErr_SetString(PyExc_TypeError, "a Codec is set up once");
        return -1;
    }
    memset(self->two_chars, -1, sizeof self->two_chars);
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(codes, &pos, &key, &value)) {
        int card = plain_card(value);
        if (card < 0) {
            PyErr_SetString(PyExc_ValueError, "card_codes: every card is an int below 64");
            return -1;
        }
        if (!self->card_objs[card]) {
            Py_INCREF(value);
            self->card_objs[card] = value;
        }
        if (PyUnicode_CheckExact(key) && PyUnicode_IS_COMPACT_ASCII(key) && PyUnicode_GET_LENGTH(key) == 2) {
            const unsigned char *c = PyUnicode_1BYTE_DATA(key);
            self->two_chars[c[0]][c[1]] = (int8_t)card;
        }
    }
    pos = 0;
    while (PyDict_Next(texts, &pos, &key, &value)) {
        int card = plain_card(key);
        if (card >= 0 && !self->texts[card]) {
            Py_INCREF(value);
            self->texts[card] = value;
        }
    }
    PyObject **owned[] = GIVEN(self), **names[] = NAMES(self);
    PyObject *given[] = {codes,         group_type, read_fallback, texts_fallback, deck_fallback, move_fallback,
                         card_move,     join_fallback, shape_fallback};
    static const char *texts_of_names[] = {"codes", "action", "from", "to", "count", "ref_texts"};
    for (size_t i = 0; i < sizeof given / sizeof *given; i++) {
        Py_INCREF(given[i]);
        *owned[i] = given[i];
    }
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (!(*names[i] = PyUnicode_InternFromString(texts_of_names[i]))) return -1;
    }
    self->move_action = move_action;
    self->max_pile_cards = max_pile_cards;
    /* new_group makes a group as the class's call would: only for list's __new__ and
     * __init__, and ``codes`` a slot (an object member). */
    PyTypeObject *type = (PyTypeObject *)group_type;
    PyObject *slot = PyObject_GetAttr(group_type, self->codes_name);
#if CHECKED_CPYTHON
    int plain = slot && Py_IS_TYPE(slot, &PyMemberDescr_Type)
                && ((PyMemberDescrObject *)slot)->d_member->type == T_OBJECT_EX;
    if (plain) self->codes_offset = ((PyMemberDescrObject *)slot)->d_member->offset;
#else
    int plain = slot && Py_IS_TYPE(slot, &PyMemberDescr_Type);
#endif
    Py_XDECREF(slot);
    if (!plain || !PyType_IsSubtype(type, &PyList_Type) || type->tp_new != PyList_Type.tp_new
        || type->tp_init != PyList_Type.tp_init) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "group_type: a list subclass with list's __new__ and __init__, slot 'codes'");
        return -1;
    }
    return 0;
}

/* ---- read_pile_group -------------------------------------------------------------- */

enum { READ = 1, NOT_A_CARD = 0, FAILED = -1, NOT_PLAIN = -2 };

/* The cards of ``pile`` (an exact list of ``n`` items) into ``out`` (a new tuple of ``n``):
 * READ; NOT_A_CARD for an exact str that is no spelling (the reference's KeyError);
 * NOT_PLAIN at an item that is not an exact str, whose lookup might run Python code. */
static int read_pile(Codec *self, PyObject *pile, PyObject *out, Py_ssize_t n) {
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *item = PyList_GET_ITEM(pile, j);
        if (!PyUnicode_CheckExact(item)) return NOT_PLAIN;
        PyObject *card;
        if (PyUnicode_IS_COMPACT_ASCII(item) && PyUnicode_GET_LENGTH(item) == 2) {
            const unsigned char *c = PyUnicode_1BYTE_DATA(item);
            int code = self->two_chars[c[0]][c[1]];
            if (code < 0) return NOT_A_CARD;
            card = self->card_objs[code];
        } else {
            card = PyDict_GetItemWithError(self->card_codes, item); /* an exact str: no Python code runs */
            if (!card) return PyErr_Occurred() ? FAILED : NOT_A_CARD;
        }
        Py_INCREF(card);
        PyTuple_SET_ITEM(out, j, card);
    }
    return READ;
}

/* A ReadPileGroup of ``value``'s piles with ``codes`` (stolen): what calling the class
 * and setting the attribute do (its __new__ and __init__ are list's and ``codes`` a
 * slot, as Codec_init checks), without the call. */
static PyObject *new_group(Codec *self, PyObject *value, PyObject *codes) {
    PyTypeObject *type = (PyTypeObject *)self->group_type;
    PyObject *group = type->tp_alloc(type, 0);
    if (!group || PyList_SetSlice(group, 0, 0, value) < 0) { /* list.__init__(group, value) */
        Py_XDECREF(group);
        Py_DECREF(codes);
        return NULL;
    }
#if CHECKED_CPYTHON
    *(PyObject **)((char *)group + self->codes_offset) = codes;
#else
    int failed = PyObject_SetAttr(group, self->codes_name, codes); /* the slot's descriptor: no Python code */
    Py_DECREF(codes);
    if (failed < 0) {
        Py_DECREF(group);
        return NULL;
    }
#endif
    return group;
}

/* The ``codes`` of a group of exactly group_type (a new reference), or NULL with no error
 * set when it has none. */
static PyObject *group_codes(Codec *self, PyObject *group) {
#if CHECKED_CPYTHON
    PyObject *codes = *(PyObject **)((char *)group + self->codes_offset);
    Py_XINCREF(codes);
    return codes;
#else
    PyObject *codes = PyObject_GetAttr(group, self->codes_name);
    if (!codes && PyErr_ExceptionMatches(PyExc_AttributeError)) PyErr_Clear();
    return codes;
#endif
}

static PyObject *Codec_read_pile_group(Codec *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyLong_CheckExact(args[1])) return fallback(self->read_fallback, args, nargs);
    PyObject *value = args[0];
    Py_ssize_t max_piles = PyLong_AsSsize_t(args[1]);
    if (max_piles == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return fallback(self->read_fallback, args, nargs);
    }
    if (!PyList_CheckExact(value) || PyList_GET_SIZE(value) > max_piles) Py_RETURN_NONE;
    Py_ssize_t count = PyList_GET_SIZE(value);
    PyObject *codes = PyTuple_New(count);
    if (!codes) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *pile = PyList_GET_ITEM(value, i);
        Py_ssize_t n = PyList_CheckExact(pile) ? PyList_GET_SIZE(pile) : -1;
        if (n < 0 || (n > 1 && n > self->max_pile_cards)) {
            Py_DECREF(codes);
            Py_RETURN_NONE;
        }
        Py_INCREF(pile);
        PyObject *cards = PyTuple_New(n); /* (an allocation may collect garbage: the sizes are read again) */
        int read = !cards ? FAILED
                   : (PyList_GET_SIZE(value) != count || PyList_GET_SIZE(pile) != n) ? NOT_PLAIN
                   : read_pile(self, pile, cards, n);
        Py_DECREF(pile);
        if (read != READ) {
            Py_XDECREF(cards);
            Py_DECREF(codes);
            if (read == NOT_A_CARD) Py_RETURN_NONE;
            if (read == NOT_PLAIN) return fallback(self->read_fallback, args, nargs);
            return NULL;
        }
        PyTuple_SET_ITEM(codes, i, cards);
    }
    return new_group(self, value, codes);
}

/* ---- join_groups ------------------------------------------------------------------ */

/* Every pile of a state's groups, in layout order: ``piles`` (an exact dict with exact str
 * keys) holding exactly the names of ``layout`` (an exact tuple of (exact str name, exact
 * int count) pairs), each a group read by read_pile_group (exactly group_type, with
 * ``count`` piles and as many codes); None when it is not so; anything not plain to the
 * reference. Nothing here runs Python code: the keys are exact str. */
static PyObject *Codec_join_groups(Codec *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyDict_CheckExact(args[0]) || !PyTuple_CheckExact(args[1]))
        return fallback(self->join_fallback, args, nargs);
    PyObject *piles = args[0], *layout = args[1], *key, *value;
    Py_ssize_t ng = PyTuple_GET_SIZE(layout), total = 0, pos = 0;
    for (Py_ssize_t g = 0; g < ng; g++) {
        PyObject *pair = PyTuple_GET_ITEM(layout, g);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0)))
            return fallback(self->join_fallback, args, nargs);
        Py_ssize_t count = small_int(PyTuple_GET_ITEM(pair, 1), PY_SSIZE_T_MAX, 1);
        if (count < 0) return fallback(self->join_fallback, args, nargs);
        total += count;
    }
    while (PyDict_Next(piles, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) return fallback(self->join_fallback, args, nargs);
    }
    if (PyDict_GET_SIZE(piles) != ng) Py_RETURN_NONE;
    PyObject *out = PyTuple_New(total);
    if (!out) return NULL;
    Py_ssize_t at = 0;
    for (Py_ssize_t g = 0; g < ng; g++) {
        PyObject *pair = PyTuple_GET_ITEM(layout, g);
        Py_ssize_t count = small_int(PyTuple_GET_ITEM(pair, 1), PY_SSIZE_T_MAX, 1);
        PyObject *group = PyDict_GetItemWithError(piles, PyTuple_GET_ITEM(pair, 0));
        PyObject *codes = group && Py_IS_TYPE(group, (PyTypeObject *)self->group_type)
                              ? group_codes(self, group) : NULL;
        if (!group || PyList_GET_SIZE(group) != count || !codes || !PyTuple_CheckExact(codes)
            || PyTuple_GET_SIZE(codes) != count || at + count > total) {
            Py_XDECREF(codes);
            Py_DECREF(out);
            if (PyErr_Occurred()) return NULL;
            Py_RETURN_NONE;
        }
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *pile = PyTuple_GET_ITEM(codes, i);
            Py_INCREF(pile);
            PyTuple_SET_ITEM(out, at++, pile);
        }
        Py_DECREF(codes);
    }
    return out;
}

/* ---- pile_texts ------------------------------------------------------------------- */

/* Whether the reference reads ``piles`` (a tuple of ``np`` piles) and ``groups`` (their
 * (name, slice) pairs) as this file does: exact tuples (what a State and a Game hold,
 * and nothing can change them while they are read), every card a plain one with a text,
 * and slices (steps of 1, None) that follow one another from pile 0. */
static int plain_layout(Codec *self, PyObject **piles, Py_ssize_t np, PyObject *groups) {
    for (Py_ssize_t p = 0; p < np; p++) {
        PyObject *pile = piles[p];
        if (!PyTuple_CheckExact(pile)) return 0;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(pile); j++) {
            int code = plain_card(PyTuple_GET_ITEM(pile, j));
            if (code < 0 || !self->texts[code]) return 0;
        }
    }
    if (!PyTuple_CheckExact(groups)) return 0;
    Py_ssize_t next = 0;
    for (Py_ssize_t g = 0; g < PyTuple_GET_SIZE(groups); g++) {
        PyObject *pair = PyTuple_GET_ITEM(groups, g);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 || !PySlice_Check(PyTuple_GET_ITEM(pair, 1)))
            return 0;
        PySliceObject *sl = (PySliceObject *)PyTuple_GET_ITEM(pair, 1);
        Py_ssize_t start = small_int(sl->start, np + 1, 1), stop = small_int(sl->stop, np + 1, 1);
        if (sl->step != Py_None || start != next || stop < start) return 0;
        next = stop;
    }
    return 1;
}

static PyObject *Codec_pile_texts(Codec *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_CheckExact(args[0])) return fallback(self->texts_fallback, args, nargs);
    PyObject **piles = &PyTuple_GET_ITEM(args[0], 0), *pairs = args[1];
    Py_ssize_t np = PyTuple_GET_SIZE(args[0]);
    if (!plain_layout(self, piles, np, pairs)) return fallback(self->texts_fallback, args, nargs);
    /* Python code may run below (a collection's finalizers, ``leave_out``'s __contains__),
     * but the tuples read cannot change. */
    PyObject *texts = PyTuple_New(np), *out = NULL;
    if (!texts) goto fail;
    for (Py_ssize_t p = 0; p < np; p++) {
        Py_ssize_t n = PyTuple_GET_SIZE(piles[p]);
        PyObject *pile = PyList_New(n);
        if (!pile) goto fail;
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *text = self->texts[plain_card(PyTuple_GET_ITEM(piles[p], j))];
            Py_INCREF(text);
            PyList_SET_ITEM(pile, j, text);
        }
        PyTuple_SET_ITEM(texts, p, pile);
    }
    Py_ssize_t ng = PyTuple_GET_SIZE(pairs);
    out = new_dict(ng);
    if (!out) goto fail;
    for (Py_ssize_t g = 0; g < ng; g++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, g), *name = PyTuple_GET_ITEM(pair, 0);
        PySliceObject *sl = (PySliceObject *)PyTuple_GET_ITEM(pair, 1);
        Py_ssize_t start = small_int(sl->start, np + 1, 1), stop = small_int(sl->stop, np + 1, 1);
        int left_out = PySequence_Contains(args[2], name);
        if (left_out < 0) goto fail;
        if (left_out) continue;
        PyObject *group = PyList_New(stop - start);
        if (!group) goto fail;
        for (Py_ssize_t p = start; p < stop; p++) {
            PyObject *pile = PyTuple_GET_ITEM(texts, p);
            Py_INCREF(pile);
            PyList_SET_ITEM(group, p - start, pile);
        }
        int set = PyDict_SetItem(out, name, group);
        Py_DECREF(group);
        if (set < 0) goto fail;
    }
    Py_DECREF(texts);
    return out;
fail:
    Py_XDECREF(texts);
    Py_XDECREF(out);
    return NULL;
}

/* ---- holds_the_deck --------------------------------------------------------------- */

/* Add (sign 1) or take away (-1) the cards of ``seq`` (an exact list or tuple) in
 * ``counts``: 0 when one is not a plain card. */
static int count_cards(PyObject *seq, Py_ssize_t *counts, int sign) {
    PyObject **cards = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(seq); j++) {
        int card = plain_card(cards[j]);
        if (card < 0) return 0;
        counts[card] += sign;
    }
    return 1;
}

static PyObject *Codec_holds_the_deck(Codec *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || (!PyTuple_CheckExact(args[0]) && !PyList_CheckExact(args[0])) || !PyList_CheckExact(args[1]))
        return fallback(self->deck_fallback, args, nargs);
    Py_ssize_t counts[SLOTS] = {0};
    PyObject **piles = PySequence_Fast_ITEMS(args[0]);
    for (Py_ssize_t p = 0; p < PySequence_Fast_GET_SIZE(args[0]); p++) {
        if ((!PyTuple_CheckExact(piles[p]) && !PyList_CheckExact(piles[p])) || !count_cards(piles[p], counts, 1))
            return fallback(self->deck_fallback, args, nargs);
    }
    if (!count_cards(args[1], counts, -1)) return fallback(self->deck_fallback, args, nargs);
    /* Plain cards all: the same multiset sorts to the same list. */
    for (int c = 0; c < SLOTS; c++) {
        if (counts[c]) Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

/* The same answer, with each pile also holding at most its bound in ``args[2]`` (an exact
 * tuple of exact ints, one per pile): core.holds_the_deck_within. */
static PyObject *Codec_holds_the_deck_within(Codec *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || (!PyTuple_CheckExact(args[0]) && !PyList_CheckExact(args[0])) || !PyList_CheckExact(args[1])
        || !PyTuple_CheckExact(args[2]))
        return fallback(self->shape_fallback, args, nargs);
    Py_ssize_t np = PySequence_Fast_GET_SIZE(args[0]);
    if (PyTuple_GET_SIZE(args[2]) != np) return fallback(self->shape_fallback, args, nargs);
    Py_ssize_t counts[SLOTS] = {0};
    PyObject **piles = PySequence_Fast_ITEMS(args[0]), **most = &PyTuple_GET_ITEM(args[2], 0);
    int within = 1;
    for (Py_ssize_t p = 0; p < np; p++) {
        if ((!PyTuple_CheckExact(piles[p]) && !PyList_CheckExact(piles[p])) || !PyLong_CheckExact(most[p])
            || !count_cards(piles[p], counts, 1))
            return fallback(self->shape_fallback, args, nargs);
        int overflow;
        long bound = PyLong_AsLongAndOverflow(most[p], &overflow); /* an exact int: no Python code */
        if (overflow > 0) continue;                                 /* above any length */
        if (overflow < 0 || (bound == -1 && PyErr_Occurred())) return fallback(self->shape_fallback, args, nargs);
        if (PySequence_Fast_GET_SIZE(piles[p]) > bound) within = 0;
    }
    if (!count_cards(args[1], counts, -1)) return fallback(self->shape_fallback, args, nargs);
    if (!within) Py_RETURN_FALSE;
    for (int c = 0; c < SLOTS; c++) {
        if (counts[c]) Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

/* ---- move_to_json ----------------------------------------------------------------- */

/* The table of the game whose pile references are ``refs``: its own, else (``make``) a
 * new one in place of the oldest; else NULL (with an error set only when ``make``). No
 * Python code runs here: nothing can change the tables meanwhile. */
static MoveTable *move_table(Codec *self, PyObject *refs, int make) {
    for (int i = 0; i < MOVE_GAMES; i++) {
        if (self->moves[i].refs == refs) return &self->moves[i];
    }
    if (!make) return NULL;
    MoveTable *t = &self->moves[self->next_table];
    self->next_table = (self->next_table + 1) % MOVE_GAMES;
    move_table_clear(t); /* (the old game's answers are dicts of str and int: freeing them runs no Python code) */
    t->keys = PyMem_Calloc(MOVE_SLOTS, sizeof *t->keys);
    t->answers = PyMem_Calloc(MOVE_SLOTS, sizeof *t->answers);
    if (!t->keys || !t->answers) {
        move_table_clear(t);
        PyErr_NoMemory();
        return NULL;
    }
    Py_INCREF(refs);
    t->refs = refs;
    return t;
}

/* The slot of ``key`` in ``t``: where it is, or the free one where it would go. */
static uint32_t move_slot(const MoveTable *t, uint32_t key) {
    uint32_t slot = (key * 2654435761u) >> 22; /* the top 10 bits: MOVE_SLOTS == 1 << 10 */
    while (t->keys[slot] && t->keys[slot] != key) slot = (slot + 1) & (MOVE_SLOTS - 1);
    return slot;
}

/* A card move's answer, as the reference builds it. */
static PyObject *move_answer(Codec *self, PyObject *from, PyObject *to, PyObject *count) {
    PyObject *answer = new_dict(4);
    if (!answer || PyDict_SetItem(answer, self->key_action, self->card_move) < 0
        || PyDict_SetItem(answer, self->key_from, from) < 0 || PyDict_SetItem(answer, self->key_to, to) < 0
        || PyDict_SetItem(answer, self->key_count, count) < 0) {
        Py_XDECREF(answer);
        return NULL;
    }
    return answer;
}

static PyObject *Codec_move_to_json(Codec *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != 4)
        return fallback(self->move_fallback, args, nargs);
    PyObject *game = args[0], *move = args[1];
    PyObject *action = PyTuple_GET_ITEM(move, 0), *count = PyTuple_GET_ITEM(move, 3);
    /* The piles are indexes (an int subclass reads as its value); the count goes into the
     * answer as it is, so only an exact int is answered from the table. */
    Py_ssize_t a = small_int(action, 256, 0);
    Py_ssize_t src = small_int(PyTuple_GET_ITEM(move, 1), 256, 0), dst = small_int(PyTuple_GET_ITEM(move, 2), 256, 0);
    Py_ssize_t n = small_int(count, 256, 1);
    if (a != self->move_action || src < 0 || dst < 0 || n < 0) return fallback(self->move_fallback, args, nargs);
    PyObject *refs = PyObject_GetAttr(game, self->ref_texts_name);
    if (!refs) return NULL;
    if (!PyTuple_CheckExact(refs) || src >= PyTuple_GET_SIZE(refs) || dst >= PyTuple_GET_SIZE(refs)) {
        Py_DECREF(refs);
        return fallback(self->move_fallback, args, nargs);
    }
    uint32_t key = ((uint32_t)src << 16 | (uint32_t)dst << 8 | (uint32_t)n) + 1;
    MoveTable *t = move_table(self, refs, 0);
    if (t) {
        uint32_t slot = move_slot(t, key);
        if (t->keys[slot]) {
            Py_DECREF(refs);
            Py_INCREF(t->answers[slot]);
            return t->answers[slot];
        }
    }
    /* Built first, then kept: building allocates, which may collect garbage and so run
     * Python code (a finalizer might even ask for a move); the table is looked up again. */
    PyObject *answer = move_answer(self, PyTuple_GET_ITEM(refs, src), PyTuple_GET_ITEM(refs, dst), count);
    t = answer ? move_table(self, refs, 1) : NULL;
    Py_DECREF(refs);
    if (!t) {
        Py_XDECREF(answer);
        return NULL;
    }
    uint32_t slot = move_slot(t, key);
    if (!t->keys[slot] && t->filled < MOVE_FILL) {
        t->keys[slot] = key;
        Py_INCREF(answer);
        t->answers[slot] = answer;
        t->filled++;
    }
    return answer;
}

static PyMethodDef Codec_methods[] = {
    {"read_pile_group", (PyCFunction)(void (*)(void))Codec_read_pile_group, METH_FASTCALL,
     "read_pile_group(value, max_piles): wire.python_read_pile_group."},
    {"join_groups", (PyCFunction)(void (*)(void))Codec_join_groups, METH_FASTCALL,
     "join_groups(piles, layout): wire.python_join_groups."},
    {"pile_texts", (PyCFunction)(void (*)(void))Codec_pile_texts, METH_FASTCALL,
     "pile_texts(piles, group_slices, leave_out): wire.python_pile_texts."},
    {"holds_the_deck", (PyCFunction)(void (*)(void))Codec_holds_the_deck, METH_FASTCALL,
     "holds_the_deck(piles, sorted_deck): core.holds_the_deck."},
    {"holds_the_deck_within", (PyCFunction)(void (*)(void))Codec_holds_the_deck_within, METH_FASTCALL,
     "holds_the_deck_within(piles, sorted_deck, most_cards): core.holds_the_deck_within."},
    {"move_to_json", (PyCFunction)(void (*)(void))Codec_move_to_json, METH_FASTCALL,
     "move_to_json(game, move): wire.python_move_to_json, each game's card moves' answers kept "
     "(the same dict object each time: answers are encoded, never changed)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CodecType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "service.http._wire_native.Codec",
    .tp_basicsize = sizeof(Codec),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The wire format's per-card passes, with wire.py's tables.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Codec_init,
    .tp_dealloc = (destructor)Codec_dealloc,
    .tp_methods = Codec_methods,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_wire_native",
    "The wire format's per-card passes, compiled (wire.py's Python functions are the reference).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__wire_native(void) {
    PyObject *m = PyModule_Create(&moduledef);
    if (m && PyModule_AddType(m, &CodecType) < 0) Py_CLEAR(m); /* readies the type, adds it as "Codec" */
    return m;
}
