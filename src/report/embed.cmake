# embed.cmake - turn a file into a C array at build time:
#   cmake -DIN=web/report.html -DOUT=report_html.c -DNAME=rp_report_html -P embed.cmake
# defines `const char NAME[]` (NUL-terminated) and `const size_t NAME_len`.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR n "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," arr "${hex}")
file(WRITE ${OUT} "/* generated from ${IN} by src/report/embed.cmake */\n#include <stddef.h>\nconst char ${NAME}[] = {${arr} 0};\nconst size_t ${NAME}_len = ${n};\n")
