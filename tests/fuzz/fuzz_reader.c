/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reader.c - libFuzzer harness of the trace reader (tlm_reader_*).
 *
 * Each input is read twice: as it is (mutations mostly hit a CRC and exercise
 * framing, resynchronisation and truncation), then with every checksum
 * recomputed (fuzz_fix_crcs), so that mutated bytes reach decompression and
 * the record decoder. Either way the reader must open it or refuse it with a
 * one-line message, return every record within the bounds of its fields,
 * report damage as integrity errors with a message, and end (no crash, hang,
 * leak or out-of-bounds access: the fuzz build runs under ASan+UBSan).
 * A violated invariant traps, which libFuzzer reports as a crash.
 */
#include <string.h>

#include "fuzz_input.h"
#include "tlm/trace.h"

static void read_all(const uint8_t *data, size_t size)
{
	char err[256];
	memset(err, 0, sizeof err);
	const char *path = fuzz_as_file(data, size);
	struct tlm_reader *r = tlm_reader_open(path, err, sizeof err);
	if (!r) {
		fuzz_check_line(err, sizeof err); /* refused with a message */
		return;
	}
	const struct tlm_trace_header *h = tlm_reader_header(r);
	FUZZ_CHECK(h->version == TLM_TRACE_VERSION);
	FUZZ_CHECK(strnlen(h->host, sizeof h->host) < sizeof h->host);
	FUZZ_CHECK(strnlen(h->exe, sizeof h->exe) < sizeof h->exe);
	FUZZ_CHECK(strnlen(h->tlm_version, sizeof h->tlm_version) < sizeof h->tlm_version);
	size_t argbytes = 0;
	for (uint32_t i = 0; i < h->argc; i++)
		argbytes += strlen(h->argv[i]); /* each argument readable */
	FUZZ_CHECK(argbytes <= size);

	static struct tlm_record rec;
	uint64_t n = 0, events = 0, prev_off = 0;
	int saw_end = 0;
	while (tlm_reader_next(r, &rec) == 1) {
		n++;
		FUZZ_CHECK(rec.offset >= prev_off && rec.offset < size); /* chunks only move forward */
		prev_off = rec.offset;
		switch (rec.type) {
		case TLM_REC_EVENT:
			events++;
			break;
		case TLM_REC_THREAD:
			FUZZ_CHECK(strnlen(rec.u.thread.name, sizeof rec.u.thread.name) < sizeof rec.u.thread.name);
			break;
		case TLM_REC_STACK:
			FUZZ_CHECK(rec.u.stack.depth <= TLM_MAX_STACK_DEPTH);
			break;
		case TLM_REC_MODULE:
			FUZZ_CHECK(rec.u.module.nseg <= TLM_MAX_SEGMENTS);
			FUZZ_CHECK(rec.u.module.build_id_len <= sizeof rec.u.module.build_id);
			FUZZ_CHECK(strnlen(rec.u.module.path, sizeof rec.u.module.path) < sizeof rec.u.module.path);
			break;
		case TLM_REC_END:
			saw_end = 1;
			break;
		case TLM_REC_STRING:
			FUZZ_CHECK(rec.u.string.len <= TLM_MAX_STRING);
			FUZZ_CHECK(rec.u.string.s[rec.u.string.len] == 0);
			break;
		case TLM_REC_PYSTACK:
			FUZZ_CHECK(rec.u.pystack.depth <= TLM_MAX_PY_DEPTH);
			break;
		case TLM_REC_PROP: {
			size_t kl = strnlen(rec.u.prop.key, sizeof rec.u.prop.key);
			FUZZ_CHECK(kl >= 1 && kl <= TLM_MAX_PROP_KEY);
			FUZZ_CHECK(rec.u.prop.len <= TLM_MAX_STRING);
			FUZZ_CHECK(rec.u.prop.value[rec.u.prop.len] == 0);
			break;
		}
		case TLM_REC_DEVPROCS:
			FUZZ_CHECK(rec.u.devprocs.n <= TLM_MAX_DEVPROCS);
			break;
		case TLM_REC_DEVMEM:
		case TLM_REC_CLOCK:
		case TLM_REC_MODULE_UNLOAD:
		case TLM_REC_LOST:
		case TLM_REC_SIGNAL:
			break;
		default:
			FUZZ_CHECK(0); /* unknown types are decode errors, never returned */
		}
	}
	FUZZ_CHECK(tlm_reader_next(r, &rec) == 0); /* stays at the end */
	enum tlm_trace_state st = tlm_reader_state(r);
	FUZZ_CHECK(st == TLM_TRACE_CLEAN || st == TLM_TRACE_SIGNAL || st == TLM_TRACE_TRUNCATED);
	uint64_t toff = 0;
	const char *trunc = tlm_reader_truncation(r, &toff);
	if (trunc) {
		FUZZ_CHECK(st == TLM_TRACE_TRUNCATED);
		FUZZ_CHECK(toff < size);
		fuzz_check_line(trunc, 160);
	}
	/* how it ended: said exactly for a clean trace, one short printable word */
	const char *how = tlm_reader_end_how(r);
	FUZZ_CHECK((how != NULL) == (st == TLM_TRACE_CLEAN));
	if (how) {
		FUZZ_CHECK(strlen(how) < 16);
		fuzz_check_line(how, 16);
		/* CLEAN: an END record, or a last PROP end=exec (the image replaced) */
		FUZZ_CHECK(saw_end || !strcmp(how, "exec"));
	}
	const struct tlm_integrity_error *errs = NULL;
	size_t ne = tlm_reader_errors(r, &errs);
	FUZZ_CHECK(ne <= 1024);
	for (size_t i = 0; i < ne; i++) {
		FUZZ_CHECK(errs[i].offset < size);
		fuzz_check_line(errs[i].what, sizeof errs[i].what);
	}
	(void)tlm_reader_lost(r);
	(void)events;
	tlm_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_as_is_and_repaired(data, size, read_all);
	return 0;
}
