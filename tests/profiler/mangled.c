/*
 * mangled.c - allocation sites whose ELF symbols are C++ and Rust
 * manglings (asm labels), in a C program built without debug information:
 * the symbolizer names them from the symbol table, demangled, though the
 * program has no libstdc++ (and so no __cxa_demangle). Each allocates and
 * frees 4 MiB in 1 KiB blocks.
 *   mangled
 */
#include <stdio.h>
#include <stdlib.h>

#define SITE(fn, label)                                                 \
    __attribute__((noinline)) long fn(void) __asm__(label);            \
    __attribute__((noinline)) long fn(void)                             \
    {                                                                   \
        long sum = 0;                                                   \
        for (int i = 0; i < 4096; i++) {                                \
            char *volatile p = malloc(1024);                            \
            if (!p)                                                     \
                return -1;                                              \
            p[0] = (char)i;                                             \
            sum += p[0];                                                \
            free(p);                                                    \
        }                                                               \
        return sum;                                                     \
    }

SITE(cxx_site, "_ZN2ns5Klass4makeEm")                         /* ns::Klass::make(unsigned long) */
SITE(rust_legacy_site, "_ZN7mycrate5build17h0123456789abcdefE") /* mycrate::build */
SITE(rust_v0_site, "_RNvNtCs1_7mycrate3sub4work")            /* mycrate::sub::work */

int main(void)
{
    printf("%ld\n", cxx_site() + rust_legacy_site() + rust_v0_site());
    return 0;
}
