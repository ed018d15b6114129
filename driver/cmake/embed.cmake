# Turns a binary file into a C array: cmake -DIN=file -DOUT=file.c -DNAME=sym -P embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n\t" body "${body}")
file(WRITE "${OUT}" "/* Generated from ${IN} by driver/cmake/embed.cmake: do not edit. */\n"
  "#include <stddef.h>\n\n"
  "const unsigned char ${NAME}[] = {\n\t${body}\n};\n"
  "const size_t ${NAME}_size = ${bytes};\n")
