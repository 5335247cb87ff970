/* SPDX-License-Identifier: MIT */
/*
 * header.h - the file header of trace v1: encoding (writer) and decoding
 * (reader) of struct tlm_trace_header.
 *
 * Contract: tlm__header_size() says how many bytes tlm__header_encode() will
 * write for h, after clamping strings and argv to the limits a reader accepts
 * (so a writer can never produce a header its reader rejects).
 * tlm__header_decode() parses the header fields (the bytes after the 16-byte
 * fixed part, CRC already checked), bounds-checks everything and allocates
 * h->argv as one block (free with free(h->argv)).
 */
#ifndef TLM_TRACE_HEADER_H
#define TLM_TRACE_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "tlm/trace.h"

size_t tlm__header_size(const struct tlm_trace_header *h);
void tlm__header_encode(const struct tlm_trace_header *h, uint8_t *buf);
int tlm__header_decode(const uint8_t *p, uint32_t len, struct tlm_trace_header *h,
		       char *err, size_t errlen);

#endif
