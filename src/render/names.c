/* SPDX-License-Identifier: MIT */
/* names.c - the words the renderers share (JSON values and text labels). */
#include "render/render.h"

const char *tlm__mkind_name(int k)
{
	switch (k) {
	case TLM_MEM_DEVICE: return "device";
	case TLM_MEM_MANAGED: return "managed";
	case TLM_MEM_HOST_PINNED: return "host_pinned";
	default: return "unknown";
	}
}

const char *tlm__exit_name(int e)
{
	switch (e) {
	case TLM_REPORT_CLEAN: return "clean";
	case TLM_REPORT_SIGNAL: return "signal";
	default: return "truncated";
	}
}

const char *tlm__verdict_name(int v)
{
	return v == TLM_OOM_FRAGMENTATION ? "fragmentation" : "exhaustion";
}
