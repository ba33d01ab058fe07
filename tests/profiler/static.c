/* static.c - a statically linked program: `memtrace run` must refuse it. */
#include <stdio.h>

int main(void)
{
    puts("static program ran");
    return 0;
}
