// SPDX-License-Identifier: MIT
// fix_cxx.cpp - libsymfix_cxx.so: a member function in a namespace, whose
// mangled name the symbolizer demangles to "ns::Widget::grow(int)".
#include "fixture.h"

volatile int fix_cxx_line_grow;
static fix_cb the_cb;

namespace ns {
struct Widget {
	int size;
	__attribute__((noinline)) int grow(int by);
};

int Widget::grow(int by)
{
	the_cb(); fix_cxx_line_grow = __LINE__;
	return size += by;
}
} // namespace ns

extern "C" int fix_cxx_call(fix_cb cb)
{
	the_cb = cb;
	ns::Widget w{1};
	return w.grow(2);
}
