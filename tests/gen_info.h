/*
 * gen_info.h - the trace info of the test trace generators (gen_odd,
 * gen_pair, gen_survivors, gen_collide): 64-bit words, host "host", no
 * runtime parameters, the rest as each generator says. Header-only: each
 * generator is one program.
 */
#ifndef MT_TEST_GEN_INFO_H
#define MT_TEST_GEN_INFO_H

#include <stdint.h>
#include <string.h>

#include <memtrace/memtrace.h>

static inline mt_trace_info gen_info(const char *executable, double sample_rate, int64_t pid,
                                     int64_t start_time)
{
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.sample_rate = sample_rate;
    info.word_size = 64;
    info.executable_name = executable;
    info.host_name = "host";
    info.runtime_params = "";
    info.pid = pid;
    info.start_time = start_time;
    return info;
}

#endif /* MT_TEST_GEN_INFO_H */
