/* SPDX-License-Identifier: MIT */
/*
 * fuzz_pyreader.c - libFuzzer harness of libtlmpy's trace loader, the C side
 * of the Python reader (src/python/tlmpy.h): tlm_py_load decodes a trace's
 * events into columns and everything else into one JSON object, which Python
 * then parses.
 *
 * Each input is loaded as it is and with its checksums recomputed
 * (fuzz_fix_crcs), as fuzz_reader does. The loader must refuse it with a
 * one-line message or load it; a loaded trace's meta must be one strict JSON
 * object (tlm_json_parse: RFC 8259, valid UTF-8) with its "events" equal to
 * the column length, and each column must be taken once, whole, then no more
 * (tlm_py_take's contract). No crash, hang, leak or out-of-bounds access:
 * the fuzz build runs under ASan+UBSan.
 */
#include <string.h>

#include "encoders/json_in.h"
#include "fuzz_input.h"
#include "src/python/tlmpy.h"

/* the element sizes tlmpy.h gives the columns */
static const size_t col_size[TLM_PY_NCOLS] = {
	[TLM_PY_TIME] = 8, [TLM_PY_OP] = 1, [TLM_PY_KIND] = 1, [TLM_PY_DEVICE] = 2,
	[TLM_PY_ADDRESS] = 8, [TLM_PY_SIZE] = 8, [TLM_PY_STREAM] = 8, [TLM_PY_AUX] = 8,
	[TLM_PY_THREAD] = 4, [TLM_PY_STACK] = 4, [TLM_PY_RESULT] = 4, [TLM_PY_FLAGS] = 2,
	[TLM_PY_API_COL] = 2,
};

static void load_all(const uint8_t *data, size_t size)
{
	char err[256];
	memset(err, 0, sizeof err);
	struct tlm_py_trace *t = tlm_py_load(fuzz_as_file(data, size), err, sizeof err);
	if (!t) {
		fuzz_check_line(err, sizeof err); /* refused with a message */
		return;
	}
	uint64_t n = tlm_py_events(t);
	size_t len = 0;
	const char *meta = tlm_py_meta(t, &len);
	FUZZ_CHECK(meta && strlen(meta) == len);
	char jerr[128];
	struct tlm_jv *v = tlm_json_parse(meta, len, jerr, sizeof jerr);
	FUZZ_CHECK(v && v->type == TLM_JV_OBJ); /* what Python's json.loads will read */
	uint64_t events = 0;
	FUZZ_CHECK(tlm_jv_u64(tlm_jv_get(v, "events"), &events) && events == n);
	tlm_json_free(v);
	for (int c = 0; c < TLM_PY_NCOLS; c++) {
		uint8_t *col = tlm_py_take(t, c);
		FUZZ_CHECK(!col == !n);
		if (col) {
			volatile uint8_t sink = 0;
			for (uint64_t i = 0; i < n * col_size[c]; i += 64)
				sink ^= col[i]; /* every element is the caller's to read */
			sink ^= col[n * col_size[c] - 1];
			(void)sink;
		}
		tlm_py_free(col);
		FUZZ_CHECK(tlm_py_take(t, c) == NULL); /* taken already */
	}
	FUZZ_CHECK(tlm_py_take(t, -1) == NULL && tlm_py_take(t, TLM_PY_NCOLS) == NULL);
	tlm_py_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_as_is_and_repaired(data, size, load_all);
	return 0;
}
