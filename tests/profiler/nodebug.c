/*
 * nodebug.c - a shared library built without debug information and linked
 * stripped (only its exported symbols are left), so the symbolizer must fall
 * back to its ELF symbols, or to none (test_profiler_unit.c).
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

/* Not exported, and the library is linked stripped (-s): no symbol at all,
 * so the symbolizer names it by the module and its address in the file.
 * (Its asm differs from nodebug_function's so the two cannot be folded.) */
static __attribute__((noinline)) uintptr_t nosym_function(void)
{
    uintptr_t r = nodebug_inner();
    __asm__ volatile("nop" ::: "memory");
    return r;
}

uintptr_t nosym_return_address(void)
{
    return nosym_function();
}
