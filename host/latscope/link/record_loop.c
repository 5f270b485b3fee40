/* The record loop of latscope.link.parser: one pass over a buffer's records instead of about
 * 25 numpy passes over 64-bit words (bench/README.md, parser_throughput.py).
 *
 * The record layouts and constants come from latscope_defs.protocol through the parser: every
 * table this file reads (what a lead byte means, fixed lengths, value widths, the delta's
 * width, the longest record, the CRC-32 table, ...) is built by latscope.link.parser and passed
 * in. What the code itself is written for is the byte format of records: a lead byte with the
 * flag in bit 7, continuation bytes of 7 payload bits (the word-packing masks below), which the
 * parser asserts (CONT_BITS, LEAD_FLAG) when it loads this module. Plain CPython C API and
 * the buffer protocol (numpy arrays are buffers): no numpy headers needed to build it. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_pybuffers.h"

/* A short value record refers to one of the last RING values of its source in the segment;
 * decode() refuses a ``back`` mask that does not fit. */
#define RING 8

/* decode(buf, starts, committed, tables..., outputs...)
 *   -> (REPLY records, well-formed SYNC records, well-formed SEAL records).
 *
 * buf: the bytes (read only). starts: int64 offsets of the committed records' lead bytes.
 * committed: where the committed records end (the last one's span ends there).
 * Tables by lead byte (256 entries): source (uint8; 16: unused), payload_mask (uint64),
 * short_value, short_edge (uint8 0/1), back_at, step_at (uint8 bit offsets). Tables by source
 * (17 entries, 16: an unused lead): fixed (int64, 0: not fixed), width (uint64, value bits;
 * 64: no delta), valid (uint8: a source the version defines). Constants: max_length,
 * delta_bits, event_sources (sources below it are events), reply, sync, seal (source numbers),
 * back_mask, level_at (the short edge's level bit).
 * Outputs (n records; n + 1 for the running totals, which start at 0; as few as the segment
 * checks need: memory traffic is most of the loop's time): source (uint8), value (uint64:
 * an event record's value; the whole payload of any other record, whose width is 64), ok,
 * is_event (uint8 0/1), events_before (int64), delta_sum (uint64: of the deltas, wrapping);
 * syncs, seals (int64: the record numbers of the well-formed SYNC and SEAL records, as many
 * as returned). */
static PyObject *decode(PyObject *self, PyObject *args) {
    (void)self;
    enum { IN_BUF, IN_STARTS, T_SOURCE, T_MASK, T_SVALUE, T_SEDGE, T_BACK, T_STEP, T_FIXED,
           T_WIDTH, T_VALID, O_SOURCE, O_VALUE, O_OK, O_EVENT, O_EVENTS, O_DSUM, O_SYNCS,
           O_SEALS, NBUF };
    Buf b[NBUF];
    memset(b, 0, sizeof b);
    Py_ssize_t committed, max_length;
    int delta_bits, event_sources, reply, sync, seal, back_mask, level_at;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*y*ny*y*y*y*y*y*y*y*y*niiiiiiiw*w*w*w*w*w*w*w*",
                          &b[IN_BUF].b, &b[IN_STARTS].b, &committed, &b[T_SOURCE].b,
                          &b[T_MASK].b, &b[T_SVALUE].b, &b[T_SEDGE].b, &b[T_BACK].b,
                          &b[T_STEP].b, &b[T_FIXED].b, &b[T_WIDTH].b, &b[T_VALID].b,
                          &max_length, &delta_bits, &event_sources, &reply, &sync, &seal,
                          &back_mask, &level_at, &b[O_SOURCE].b, &b[O_VALUE].b, &b[O_OK].b,
                          &b[O_EVENT].b, &b[O_EVENTS].b, &b[O_DSUM].b, &b[O_SYNCS].b,
                          &b[O_SEALS].b))
        return NULL;
    for (int i = 0; i < NBUF; i++)
        b[i].held = 1;

    const Py_ssize_t n = b[IN_STARTS].b.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t size = b[IN_BUF].b.len;
    if (!(need(&b[T_SOURCE], 256, "source") && need(&b[T_MASK], 256 * 8, "payload_mask") &&
          need(&b[T_SVALUE], 256, "short_value") && need(&b[T_SEDGE], 256, "short_edge") &&
          need(&b[T_BACK], 256, "back_at") && need(&b[T_STEP], 256, "step_at") &&
          need(&b[T_FIXED], 17 * 8, "fixed") && need(&b[T_WIDTH], 17 * 8, "width") &&
          need(&b[T_VALID], 17, "valid") && need(&b[O_SOURCE], n, "source") &&
          need(&b[O_VALUE], n * 8, "value") &&
          need(&b[O_OK], n, "ok") && need(&b[O_EVENT], n, "is_event") &&
          need(&b[O_EVENTS], (n + 1) * 8, "events_before") &&
          need(&b[O_DSUM], (n + 1) * 8, "delta_sum") && need(&b[O_SYNCS], n * 8, "syncs") &&
          need(&b[O_SEALS], n * 8, "seals")))
        goto done;
    if (back_mask >= RING || committed > size || delta_bits < 0 || delta_bits >= 64) {
        PyErr_SetString(PyExc_ValueError, "decode: a constant out of range");
        goto done;
    }

    const uint8_t *buf = b[IN_BUF].b.buf;
    const int64_t *starts = b[IN_STARTS].b.buf;
    const uint8_t *t_source = b[T_SOURCE].b.buf, *t_svalue = b[T_SVALUE].b.buf,
                  *t_sedge = b[T_SEDGE].b.buf, *t_back = b[T_BACK].b.buf,
                  *t_step = b[T_STEP].b.buf, *t_valid = b[T_VALID].b.buf;
    const uint64_t *t_mask = b[T_MASK].b.buf, *t_width = b[T_WIDTH].b.buf;
    const int64_t *t_fixed = b[T_FIXED].b.buf;
    int64_t *o_events = b[O_EVENTS].b.buf;
    uint8_t *o_source = b[O_SOURCE].b.buf, *o_ok = b[O_OK].b.buf, *o_event = b[O_EVENT].b.buf;
    int64_t *o_syncs = b[O_SYNCS].b.buf, *o_seals = b[O_SEALS].b.buf;
    Py_ssize_t syncs = 0, seals = 0;
    uint64_t *o_value = b[O_VALUE].b.buf, *o_dsum = b[O_DSUM].b.buf;

    /* The values of each source since the last SYNC record (any, well-formed or not), newest
     * at seen[source] - 1 (mod RING): what short value records refer to. */
    uint64_t ring[17][RING];
    Py_ssize_t seen[17];
    memset(seen, 0, sizeof seen);
    Py_ssize_t replies = 0;
    int64_t events = 0;
    uint64_t dsum = 0;
    o_events[0] = 0;
    o_dsum[0] = 0;

    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t at = starts[i];
        const int64_t span = (i + 1 < n ? starts[i + 1] : (int64_t)committed) - at;
        const uint8_t lead = buf[at];
        const uint8_t source = t_source[lead];
        const uint64_t lead_mask = t_mask[lead];
        const int64_t fixed = t_fixed[source];
        const int64_t length = fixed && fixed < span ? fixed : span;
        int ok = fixed ? span >= fixed : span <= max_length;
        ok &= t_valid[source];
        /* The fewest continuation bytes: the lead's payload bits and the second byte (past
         * the buffer: a lead byte) are not all 0. */
        const uint8_t second = at + 1 < size ? buf[at + 1] : 0x80;
        ok &= fixed || (lead & lead_mask) || second;

        /* The payload: the lead's bits, then 7 bits per continuation byte; a record longer
         * than the longest one has its first 8 bytes read (it is malformed). */
        const int64_t head_bytes = length < 8 ? length : 8;
        uint64_t payload;
        if (at + 8 <= size) {
            /* Branch-free: the big-endian word at the lead byte, flag bits and source masked
             * off, the bytes after the record shifted out, the 7-bit groups (8 bits apart)
             * packed together in three shift-and-mask steps. */
            uint64_t x;
            memcpy(&x, buf + at, 8);
            x = __builtin_bswap64(x);
            x = (x & ((lead_mask << 56) | UINT64_C(0x007F7F7F7F7F7F7F))) >> (64 - 8 * head_bytes);
            x -= (x >> 1) & UINT64_C(0x3F803F803F803F80); /* 14 bits, 16 apart */
            x = (x & UINT64_C(0x00003FFF00003FFF)) | ((x >> 2) & UINT64_C(0x0FFFC0000FFFC000));
            payload = (x & UINT64_C(0x000000000FFFFFFF)) | ((x >> 4) & UINT64_C(0x00FFFFFFF0000000));
        } else {
            payload = lead & lead_mask;
            for (int64_t j = 1; j < head_bytes; j++)
                payload = (payload << 7) | (buf[at + j] & 0x7F);
        }
        if (length > 8 && length <= max_length) {
            const uint64_t head = payload;
            for (int64_t j = 8; j < length; j++)
                payload = (payload << 7) | (buf[at + j] & 0x7F);
            /* A 10-byte record holds 66 bits; only payloads below 2**64 are valid. */
            if ((head >> (64 - 7 * (length - 8))) != 0)
                ok = 0;
        }

        const uint64_t width = t_width[source];
        uint64_t delta, value;
        if (width >= 64) {
            delta = 0;
            value = payload;
        } else {
            delta = payload >> width;
            value = payload & ((UINT64_C(1) << width) - 1);
        }
        if (t_sedge[lead]) {
            delta = payload;
            value = (lead >> level_at) & 1;
        } else if (t_svalue[lead]) {
            delta = payload;
            const unsigned back = (lead >> t_back[lead]) & (unsigned)back_mask;
            if ((Py_ssize_t)back < seen[source]) {
                const uint64_t step = (lead >> t_step[lead]) & 1;
                const uint64_t earlier = ring[source][(seen[source] - 1 - back) % RING];
                value = (earlier + step) & ((UINT64_C(1) << width) - 1);
            } else {
                ok = 0; /* a reference beyond the segment's SYNC */
            }
        }
        if (source == sync)
            memset(seen, 0, sizeof seen);
        else if (source < 17) {
            ring[source][seen[source] % RING] = value;
            seen[source]++;
        }
        ok &= (delta >> delta_bits) == 0;
        if (source == reply) {
            replies++;
            ok &= span <= 2 && payload <= 0xFF;
        }
        if (ok && source == sync)
            o_syncs[syncs++] = i;
        if (ok && source == seal)
            o_seals[seals++] = i;
        const int is_event = ok && source < event_sources;
        events += is_event;
        dsum += delta;

        o_source[i] = source;
        o_value[i] = value;
        o_ok[i] = (uint8_t)ok;
        o_event[i] = (uint8_t)is_event;
        o_events[i + 1] = events;
        o_dsum[i + 1] = dsum;
    }
    result = Py_BuildValue("nnn", replies, syncs, seals);
done:
    release(b, NBUF);
    return result;
}


/* gather(first, end, base, is_event, delta_sum, source, value, latency, later, pad_delay,
 *        out_stamp, out_source, out_value) -> events written.
 *
 * The events of the delivered segments, in stream order: segment k (int64 first[k], end[k],
 * uint64 base[k]: its SYNC's record, the record after its last event, the SYNC's 64-bit
 * stamp) gives its event records between them, each stamped base + the deltas after the
 * SYNC up to the event (wrapping), then moved to the time of its pin: minus latency[source]
 * (never below 0), plus later[source] and pad_delay[source] (uint64, 16 sources). */
static PyObject *gather(PyObject *self, PyObject *args) {
    (void)self;
    enum { FIRST, END, BASE, EVENT, DSUM, SOURCE, VALUE, LATENCY, LATER, PAD, O_STAMP, O_SOURCE,
           O_VALUE, NBUF };
    Buf b[NBUF];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*w*w*w*", &b[FIRST].b, &b[END].b,
                          &b[BASE].b, &b[EVENT].b, &b[DSUM].b, &b[SOURCE].b, &b[VALUE].b,
                          &b[LATENCY].b, &b[LATER].b, &b[PAD].b, &b[O_STAMP].b, &b[O_SOURCE].b,
                          &b[O_VALUE].b))
        return NULL;
    for (int i = 0; i < NBUF; i++)
        b[i].held = 1;
    const Py_ssize_t segments = b[FIRST].b.len / 8, records = b[EVENT].b.len;
    const Py_ssize_t room = b[O_STAMP].b.len / 8;
    if (!(need(&b[END], segments * 8, "end") && need(&b[BASE], segments * 8, "base") &&
          need(&b[DSUM], (records + 1) * 8, "delta_sum") && need(&b[SOURCE], records, "source") &&
          need(&b[VALUE], records * 8, "value") && need(&b[LATENCY], 16 * 8, "latency") &&
          need(&b[LATER], 16 * 8, "later") && need(&b[PAD], 16 * 8, "pad_delay") &&
          need(&b[O_SOURCE], room, "out_source") &&
          need(&b[O_VALUE], room * 8, "out_value")))
        goto done;
    const int64_t *first = b[FIRST].b.buf, *end = b[END].b.buf;
    const uint64_t *base = b[BASE].b.buf, *dsum = b[DSUM].b.buf, *value = b[VALUE].b.buf;
    const uint64_t *latency = b[LATENCY].b.buf, *later = b[LATER].b.buf, *pad = b[PAD].b.buf;
    const uint8_t *is_event = b[EVENT].b.buf, *source = b[SOURCE].b.buf;
    uint64_t *o_stamp = b[O_STAMP].b.buf, *o_value = b[O_VALUE].b.buf;
    uint8_t *o_source = b[O_SOURCE].b.buf;
    Py_ssize_t out = 0;
    for (Py_ssize_t k = 0; k < segments; k++) {
        if (first[k] < 0 || end[k] > records || first[k] >= end[k]) {
            PyErr_SetString(PyExc_ValueError, "gather: a segment outside the records");
            goto done;
        }
        const uint64_t offset = base[k] - dsum[first[k] + 1];
        for (int64_t i = first[k] + 1; i < end[k]; i++) {
            if (!is_event[i])
                continue;
            if (out == room) {
                PyErr_SetString(PyExc_ValueError, "gather: more events than room");
                goto done;
            }
            const uint8_t s = source[i] & 15;
            const uint64_t stamp = dsum[i + 1] + offset;
            o_stamp[out] = (stamp > latency[s] ? stamp : latency[s]) - latency[s] + later[s] + pad[s];
            o_source[out] = source[i];
            o_value[out] = value[i];
            out++;
        }
    }
    result = PyLong_FromSsize_t(out);
done:
    release(b, NBUF);
    return result;
}

/* CRC-32 by slicing 8 bytes at a time; table[0] is the byte-at-a-time table the parser
 * derives from latscope_defs.protocol.crc32, the other seven follow from it. */
static uint32_t crc_tables[8][256];
static int crc_ready = 0;

static void crc_prepare(const uint32_t *table) {
    for (int i = 0; i < 256; i++)
        crc_tables[0][i] = table[i];
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++) {
            const uint32_t c = crc_tables[k - 1][i];
            crc_tables[k][i] = (c >> 8) ^ crc_tables[0][c & 0xFF];
        }
    crc_ready = 1;
}

static uint32_t crc32_of(const uint8_t *p, int64_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
        lo ^= c; /* little-endian words (the module is built for x86-64 and arm64 hosts) */
        c = crc_tables[7][lo & 0xFF] ^ crc_tables[6][(lo >> 8) & 0xFF] ^
            crc_tables[5][(lo >> 16) & 0xFF] ^ crc_tables[4][lo >> 24] ^
            crc_tables[3][hi & 0xFF] ^ crc_tables[2][(hi >> 8) & 0xFF] ^
            crc_tables[1][(hi >> 16) & 0xFF] ^ crc_tables[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = (c >> 8) ^ crc_tables[0][(c ^ *p++) & 0xFF];
    return c ^ 0xFFFFFFFFu;
}

/* clean_run(crc_bytes, crc_table, pos, sync, close, ok, tally, events, sent, captured,
 *           stamp48, crc, segment_sum, k, done, done_byte, seal_length, last_sent,
 *           last_stamp48, last_stamp64, stamp_mask, sequence_mask,
 *           out_first, out_end, out_base)
 *   -> (k, done, done_byte, delivered, last_sent, last_stamp48, last_stamp64)
 *
 * Version 2 on, the usual case of latscope.link.chain.SegmentChain.place in a loop: from
 * segment k on (per SYNC k: its record sync[k], its SEAL close[k] or -1, and the fields
 * latscope.link.parser's _precheck_v2 read), every segment that follows the last delivered
 * one directly (no bytes between them, its checks and CRC-32 pass, the records sent before it
 * are the last one's, not the opening segment of a run) is delivered: (first, end, base)
 * into the outputs. Stops at the first that is not (the parser's general path takes it). */
static PyObject *clean_run(PyObject *self, PyObject *args) {
    (void)self;
    enum { BYTES, TABLE, POS, SYNC, CLOSE, OK, TALLY, EVENTS, SENT, CAPTURED, STAMP, CRC, SUM,
           O_FIRST, O_END, O_BASE, NBUF };
    Buf b[NBUF];
    memset(b, 0, sizeof b);
    Py_ssize_t k;
    long long done, done_byte, seal_length, last_sent;
    unsigned long long last_stamp48, last_stamp64, stamp_mask, sequence_mask;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*y*nLLLLKKKKw*w*w*", &b[BYTES].b,
                          &b[TABLE].b, &b[POS].b, &b[SYNC].b, &b[CLOSE].b, &b[OK].b,
                          &b[TALLY].b, &b[EVENTS].b, &b[SENT].b, &b[CAPTURED].b, &b[STAMP].b,
                          &b[CRC].b, &b[SUM].b, &k, &done, &done_byte, &seal_length,
                          &last_sent, &last_stamp48, &last_stamp64, &stamp_mask, &sequence_mask,
                          &b[O_FIRST].b, &b[O_END].b, &b[O_BASE].b))
        return NULL;
    for (int i = 0; i < NBUF; i++)
        b[i].held = 1;
    const Py_ssize_t segments = b[SYNC].b.len / 8, records = b[POS].b.len / 8 - 1;
    if (!(need(&b[TABLE], 256 * 4, "crc_table") && need(&b[CLOSE], segments * 8, "close") &&
          need(&b[OK], segments, "ok") && need(&b[TALLY], segments * 8, "tally") &&
          need(&b[EVENTS], segments * 8, "events") && need(&b[SENT], segments * 8, "sent") &&
          need(&b[CAPTURED], segments * 8, "captured") && need(&b[STAMP], segments * 8, "stamp48") &&
          need(&b[CRC], segments * 8, "crc") && need(&b[SUM], segments * 8, "segment_sum") &&
          need(&b[O_FIRST], (segments - k) * 8, "out_first") &&
          need(&b[O_END], (segments - k) * 8, "out_end") &&
          need(&b[O_BASE], (segments - k) * 8, "out_base")))
        goto done;
    if (k < 0 || k > segments) {
        PyErr_SetString(PyExc_ValueError, "clean_run: k out of range");
        goto done;
    }
    if (!crc_ready)
        crc_prepare(b[TABLE].b.buf);
    const uint8_t *bytes = b[BYTES].b.buf, *ok = b[OK].b.buf;
    const int64_t *pos = b[POS].b.buf, *sync = b[SYNC].b.buf, *close = b[CLOSE].b.buf,
                  *tally = b[TALLY].b.buf, *events = b[EVENTS].b.buf, *sent = b[SENT].b.buf,
                  *captured = b[CAPTURED].b.buf;
    const uint64_t *stamp = b[STAMP].b.buf, *crc = b[CRC].b.buf, *sum = b[SUM].b.buf;
    int64_t *o_first = b[O_FIRST].b.buf, *o_end = b[O_END].b.buf;
    uint64_t *o_base = b[O_BASE].b.buf;
    Py_ssize_t delivered = 0;
    for (; k < segments; k++) {
        const int64_t s = sync[k], e = close[k];
        if (s != done || pos[s] != done_byte || e < 0 || e >= records || !ok[k])
            break;
        if ((int64_t)((uint64_t)(sent[k] - events[k]) & sequence_mask) != last_sent)
            break;
        if (sent[k] == events[k] && captured[k] == events[k])
            break; /* the opening segment of a run: remembered by the chain */
        if (pos[e] > b[BYTES].b.len || crc32_of(bytes + pos[s], pos[e] - pos[s]) != crc[k])
            break;
        const uint64_t base = last_stamp64 + ((stamp[k] - last_stamp48) & stamp_mask);
        last_sent = sent[k];
        last_stamp48 = (stamp[k] + sum[k]) & stamp_mask;
        last_stamp64 = base + sum[k];
        o_first[delivered] = s;
        o_end[delivered] = tally[k];
        o_base[delivered] = base;
        delivered++;
        done = e + 1;
        done_byte = pos[e] + seal_length;
    }
    result = Py_BuildValue("nLLnLKK", k, done, done_byte, delivered, last_sent, last_stamp48,
                           last_stamp64);
done:
    release(b, NBUF);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, "Decodes a buffer's records in one pass (see the source)."},
    {"gather", gather, METH_VARARGS, "The events of the delivered segments (see the source)."},
    {"clean_run", clean_run, METH_VARARGS, "Delivers the segments that follow on cleanly."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "record_loop", "The record loop of latscope.link.parser.", -1, methods,
};

PyMODINIT_FUNC PyInit_record_loop(void) { return PyModule_Create(&module); }
