# bench/compile.py (label bench): SPIR-V translation time per test module and
# the cycles of the compiled matrix multiplies against hand-written ZE-ISA.
# Included by tests/e2e/spirv.cmake, which defines the kernels and the e2e stack.
set(BENCH_MATMUL_ELF ${CMAKE_BINARY_DIR}/bench/matmul.elf)
add_custom_command(OUTPUT ${BENCH_MATMUL_ELF}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bench
  COMMAND zesim-as -o ${BENCH_MATMUL_ELF} ${PROJECT_SOURCE_DIR}/bench/matmul.zeasm
  DEPENDS zesim-as ${PROJECT_SOURCE_DIR}/bench/matmul.zeasm
  COMMENT "Assembling bench/matmul.zeasm")
add_custom_target(bench_kernels DEPENDS ${BENCH_MATMUL_ELF})

add_executable(compile_bench ${PROJECT_SOURCE_DIR}/bench/compile_bench.c)
target_include_directories(compile_bench PRIVATE ${E2E_LEVEL_ZERO_INCLUDE} ${PROJECT_SOURCE_DIR}/tests/e2e)
target_compile_definitions(compile_bench PRIVATE _GNU_SOURCE)
# The host reference rounds each operation on its own; fmaf is the kernels' mad.
target_compile_options(compile_bench PRIVATE -ffp-contract=off)
target_link_libraries(compile_bench PRIVATE zs_spirv ${ZE_LOADER_LIB} m)
add_dependencies(compile_bench ${E2E_STACK} spirv_kernels bench_kernels)

# Small matrices and one timed run (the figures in README.md are at the defaults).
add_test(NAME bench_compile
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/compile.py --bench $<TARGET_FILE:compile_bench>
    --kernels ${SPV_KERNEL_DIR} --hand ${BENCH_MATMUL_ELF} --build ${CMAKE_BINARY_DIR} --size 29 --repeat 1)
set_tests_properties(bench_compile PROPERTIES LABELS bench TIMEOUT 300)
