/*
 * nodebug.c - a shared library built without debug information, so the
 * symbolizer must fall back to its ELF symbols (test_profiler_unit.c).
 */
#include <stdint.h>

__attribute__((noinline)) uintptr_t nodebug_inner(void)
{
    uintptr_t r = (uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
    return r;
}

/* Returns an address inside nodebug_function (a return address). */
__attribute__((noinline)) uintptr_t nodebug_function(void)
{
    uintptr_t r = nodebug_inner();
    __asm__ volatile("" ::: "memory");
    return r;
}

uintptr_t nodebug_return_address(void)
{
    return nodebug_function();
}
