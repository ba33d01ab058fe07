// cxx_map.cpp - a C++ program whose allocations go through operator new
// and delete: a std::map of std::string keys and values (longer than the
// small-string buffer), filled, searched, partly erased. Prints a checksum.
#include <cstdio>
#include <map>
#include <string>

static std::string make(long i, const char *what)
{
    return std::string(what) + " number " + std::to_string(i) + " with a long enough tail";
}

int main()
{
    std::map<std::string, std::string> m;
    for (long i = 0; i < 60000; i++)
        m[make(i, "key")] = make(i * 7, "value");
    unsigned long sum = 0;
    for (long i = 0; i < 60000; i += 3)
        sum += m.find(make(i, "key"))->second.size();
    for (long i = 0; i < 60000; i += 2)
        m.erase(make(i, "key"));
    std::printf("map size %zu, checksum %lu\n", m.size(), sum);
    return 0;
}
