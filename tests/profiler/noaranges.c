/*
 * noaranges.c - a shared library with DWARF but without .debug_aranges
 * (removed after the build: tests/profiler/CMakeLists.txt), as clang builds
 * them by default. libdw 0.188 finds no compile unit for its addresses by
 * itself; the symbolizer must find it by the units' ranges
 * (test_profiler_unit.c).
 */
#include <stdint.h>

__attribute__((noinline)) uintptr_t noaranges_inner(void)
{
    uintptr_t r = (uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
    return r;
}

/* Returns an address inside noaranges_return_address (a return address). */
__attribute__((noinline)) uintptr_t noaranges_return_address(void)
{
    uintptr_t r = noaranges_inner(); /* LINE_NOARANGES */
    __asm__ volatile("" ::: "memory");
    return r;
}
