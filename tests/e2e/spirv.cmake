# Tests of the driver's SPIR-V front end (driver/README.md, "SPIR-V front end"),
# included by CMakeLists.txt.  The kernels are OpenCL C in tests/kernels/,
# compiled to SPIR-V at build time (tests/kernels/kernels.cmake).
include(${PROJECT_SOURCE_DIR}/tests/kernels/kernels.cmake)

foreach(t spirv spirv_ops spirv_errors spirv_corpus spirv_narrow spirv_link spirv_printf spirv_math spirv_pointers spirv_ptr_random)
  add_executable(e2e_${t} test_${t}.c)
  target_include_directories(e2e_${t} PRIVATE ${E2E_LEVEL_ZERO_INCLUDE})
  target_compile_definitions(e2e_${t} PRIVATE _GNU_SOURCE)
  # The host references round each float operation on its own, as the
  # kernels do (FP_CONTRACT OFF).
  target_compile_options(e2e_${t} PRIVATE -ffp-contract=off)
  target_link_libraries(e2e_${t} PRIVATE ${ZE_LOADER_LIB} m Threads::Threads)
  add_dependencies(e2e_${t} ${E2E_STACK} spirv_kernels)
endforeach()

# The five kernels of phase 1, the work-item functions in 3-D, the coverage
# kernels, specialization constants; each also under the validation layer
# (e2e_test).
foreach(k vadd saxpy elementwise reduce histogram builtins)
  e2e_test(spirv_${k} spirv ${k} ${SPV_KERNEL_DIR}/${k}.spv)
endforeach()
e2e_test(spirv_ops spirv_ops ${SPV_KERNEL_DIR})
e2e_test(spirv_narrow spirv_narrow ${SPV_KERNEL_DIR}/narrow.spv ${SPV_KERNEL_DIR}/private.spv)
# Pointers stored in memory, against the host; a local pointer in memory refused.
e2e_test(spirv_pointers spirv_pointers ${SPV_KERNEL_DIR}/pointers.spv ${SPV_KERNEL_DIR}/pointers_bad.spv
  ${SPV_KERNEL_DIR}/ptr_asm.spv)
# Random pointer-chain kernels (tests/kernels/gen_pointers.py, fixed seed)
# against the generator's Python results; other seeds by hand.
e2e_test(spirv_ptr_random spirv_ptr_random ${SPV_KERNEL_DIR}/ptr_random)
e2e_test(spirv_spec_constants spirv spec ${SPV_KERNEL_DIR}/spec_constants.spv)
# Every OpSpecConstantOp operation the evaluator handles, against the host.
e2e_test(spirv_spec_ops spirv spec_ops ${SPV_KERNEL_DIR}/spec_ops.spv)
# Program-scope variables; printf (the test compares the exact output of a
# child process, stdout and stderr, with the text it expects).
e2e_test(spirv_constdata spirv_printf constdata ${SPV_KERNEL_DIR})
e2e_test(spirv_printf spirv_printf printf ${SPV_KERNEL_DIR})
e2e_test(spirv_printf_fp64 spirv_printf printf ${SPV_KERNEL_DIR}/fp64)
# Malformed and unsupported modules: error codes and build logs.
e2e_test(spirv_errors spirv_errors ${SPV_KERNEL_DIR})
# The OpenCL.std functions computed by code sequences (math.cl) against the
# host's glibc within OpenCL's ulp bounds, or exactly; a sample of every
# kernel's launches again on the Python ISS, bit for bit (65 launches).
e2e_test(spirv_math spirv_math ${SPV_KERNEL_DIR})
add_test(NAME e2e_spirv_math_vs_iss
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/vs_iss.py --launches 71 --
    ${E2E_RUN} $<TARGET_FILE:e2e_spirv_math> ${SPV_KERNEL_DIR})
set_tests_properties(e2e_spirv_math_vs_iss PROPERTIES LABELS e2e TIMEOUT 300
  ENVIRONMENT "ZESIM_BUILD=${CMAKE_BINARY_DIR}")
# Modules importing functions from each other: zeModuleDynamicLink.
e2e_test(spirv_link spirv_link ${SPV_KERNEL_DIR})
# Application kernels (test_spirv_corpus.c), each on several sizes; the
# long-running loop also in a large configuration, label `long` only (about
# 30 s: `ctest -L long`, or left out with `-LE long`).
foreach(k matmul scan iterate black_scholes invariant)
  e2e_test(spirv_${k} spirv_corpus ${k} ${SPV_KERNEL_DIR}/${k}.spv)
endforeach()
add_test(NAME e2e_spirv_iterate_long COMMAND ${E2E_RUN} $<TARGET_FILE:e2e_spirv_corpus> iterate
  ${SPV_KERNEL_DIR}/iterate.spv long)
set_tests_properties(e2e_spirv_iterate_long PROPERTIES LABELS long TIMEOUT 900
  ENVIRONMENT "ZESIM_BUILD=${CMAKE_BINARY_DIR}")

# Random expression kernels (tests/kernels/gen_random.py: 10 modules of 55
# kernels, generated and compiled at build time with a fixed seed) against the
# generator's Python reference; other seeds by hand (gen_random.py --compile).
add_executable(e2e_spirv_random test_spirv_random.c)
target_include_directories(e2e_spirv_random PRIVATE ${E2E_LEVEL_ZERO_INCLUDE})
target_compile_definitions(e2e_spirv_random PRIVATE _GNU_SOURCE)
target_link_libraries(e2e_spirv_random PRIVATE ${ZE_LOADER_LIB} m Threads::Threads)
add_dependencies(e2e_spirv_random ${E2E_STACK} spirv_kernels)
e2e_test(spirv_random spirv_random ${SPV_RANDOM_DIR})

# Counted-loop kernels (tests/kernels/gen_loops.py: 6 modules of 16 kernels,
# fixed seed) built with and without -fno-unroll-loops against the host's
# results; other seeds by hand (gen_loops.py --seed).
add_executable(e2e_spirv_loops test_spirv_loops.c)
target_include_directories(e2e_spirv_loops PRIVATE ${E2E_LEVEL_ZERO_INCLUDE})
target_compile_definitions(e2e_spirv_loops PRIVATE _GNU_SOURCE)
target_link_libraries(e2e_spirv_loops PRIVATE ${ZE_LOADER_LIB} Threads::Threads)
add_dependencies(e2e_spirv_loops ${E2E_STACK} spirv_kernels)
e2e_test(spirv_loops spirv_loops ${SPV_LOOPS_DIR})
e2e_test(spirv_loops_pipe spirv_loops ${SPV_LOOPS_PIPE_DIR})

# The reader and front end on hand-made modules, and every test module
# mutated at random (no crash, always a result or a message); the second run
# under ASan/UBSan.
foreach(suffix "" "-san")
  add_executable(test_spirv_reader${suffix} test_spirv_reader.c)
  target_link_libraries(test_spirv_reader${suffix} PRIVATE zs_spirv${suffix})
  add_dependencies(test_spirv_reader${suffix} spirv_kernels)
endforeach()
add_test(NAME spirv_reader COMMAND test_spirv_reader ${SPV_KERNEL_DIR} 2000)
add_test(NAME spirv_reader_san COMMAND test_spirv_reader-san ${SPV_KERNEL_DIR} 2000)
set_tests_properties(spirv_reader PROPERTIES LABELS unit TIMEOUT 300)
set_tests_properties(spirv_reader_san PROPERTIES LABELS sanitize TIMEOUT 600)

# The code sequences of spv_math.c on the host, with the IR builder replaced by
# an interpreter of the ISA (no device): 100000 inputs per function against
# glibc.
add_executable(test_spirv_math_host test_spirv_math_host.c ${PROJECT_SOURCE_DIR}/driver/spirv/spv_math.c)
target_include_directories(test_spirv_math_host PRIVATE $<TARGET_PROPERTY:zs_spirv,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_definitions(test_spirv_math_host PRIVATE _GNU_SOURCE)
target_compile_options(test_spirv_math_host PRIVATE -ffp-contract=off)
target_link_libraries(test_spirv_math_host PRIVATE zesim_module m)
add_dependencies(test_spirv_math_host zs_spirv)
add_test(NAME spirv_math_host COMMAND test_spirv_math_host 100000)
set_tests_properties(spirv_math_host PROPERTIES LABELS unit TIMEOUT 300)

# spv_link without a device: linked modules checked by spirv-val and
# compiled, failing links, mutated modules (the second run under ASan/UBSan).
foreach(suffix "" "-san")
  add_executable(test_spirv_link_unit${suffix} test_spirv_link_unit.c)
  target_link_libraries(test_spirv_link_unit${suffix} PRIVATE zs_spirv${suffix})
  add_dependencies(test_spirv_link_unit${suffix} spirv_kernels)
endforeach()
add_test(NAME spirv_link COMMAND test_spirv_link_unit ${SPV_KERNEL_DIR} ${ZESIM_SPIRV_VAL} 2000)
add_test(NAME spirv_link_san COMMAND test_spirv_link_unit-san ${SPV_KERNEL_DIR} ${ZESIM_SPIRV_VAL} 2000)
set_tests_properties(spirv_link PROPERTIES LABELS unit TIMEOUT 300)
set_tests_properties(spirv_link_san PROPERTIES LABELS sanitize TIMEOUT 600)

# SIMD8 and SIMD16 translations of the phase-1 kernels on the Python ISS.
add_test(NAME spirv_iss
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/spirv_iss.py
    --spirv $<TARGET_FILE:zesim-spirv> --kernels ${SPV_KERNEL_DIR})
set_tests_properties(spirv_iss PROPERTIES LABELS unit TIMEOUT 600)

# The front end's compile time and code quality (bench/compile.py, label bench).
include(${PROJECT_SOURCE_DIR}/bench/compile.cmake)

# -g: OpLine positions in the DWARF line table (zesim-spirv -g).
add_test(NAME spirv_lines
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/test_spirv_lines.py
    --spirv $<TARGET_FILE:zesim-spirv> --dis $<TARGET_FILE:zesim-dis>
    ${SPV_KERNEL_DIR}/saxpy_g.spv ${SPV_KERNEL_SRC}/saxpy.cl
    ${SPV_KERNEL_DIR}/elementwise_g.spv ${SPV_KERNEL_SRC}/elementwise.cl)
set_tests_properties(spirv_lines PROPERTIES LABELS unit TIMEOUT 120)

# Fences left out before barriers (spv_backend.c, drop_idle_fences): never
# with a store or a shared-memory read in flight.
add_test(NAME spirv_fences
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/test_spirv_fences.py
    --spirv $<TARGET_FILE:zesim-spirv> --dis $<TARGET_FILE:zesim-dis>
    ${SPV_KERNEL_DIR}/regress.spv ${SPV_KERNEL_DIR}/matmul.spv ${SPV_KERNEL_DIR}/reduce.spv
    ${SPV_KERNEL_DIR}/scan.spv ${SPV_KERNEL_DIR}/histogram.spv ${SPV_KERNEL_DIR}/ops.spv
    ${SPV_KERNEL_DIR}/narrow.spv)
set_tests_properties(spirv_fences PROPERTIES LABELS unit TIMEOUT 120)

# The loop optimisations (spv_loops.c) take place: unrolled naive matmul, the
# tiled one's next tiles loaded ahead, reciprocals of loop-invariant divisors
# computed before the loop; plain loops with -fno-unroll-loops.
add_test(NAME spirv_loop_code
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/test_spirv_loop_code.py
    --spirv $<TARGET_FILE:zesim-spirv> --dis $<TARGET_FILE:zesim-dis>
    ${SPV_KERNEL_DIR}/matmul.spv ${SPV_KERNEL_DIR}/invariant.spv)
set_tests_properties(spirv_loop_code PROPERTIES LABELS unit TIMEOUT 120)

# A module of functions and data only (a library: it exports them) builds,
# with no kernels.
e2e_test(spirv_nokernels spirv nokernels ${SPV_KERNEL_DIR}/functions.spv)

# SPIR-V as older compilers wrote it (tests/kernels/old_spirv.py, the modules
# above rewritten into build/tests/kernels/old/): the same programs with the
# same expected results, on the older form of each module.
function(spirv_old_test name program)
  add_test(NAME e2e_spirv_old_${name} COMMAND ${E2E_RUN} $<TARGET_FILE:e2e_${program}> ${ARGN})
  set_tests_properties(e2e_spirv_old_${name} PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "ZESIM_BUILD=${CMAKE_BINARY_DIR}")
endfunction()
foreach(k vadd saxpy elementwise reduce histogram builtins)
  spirv_old_test(${k} spirv ${k} ${SPV_OLD_DIR}/${k}.spv)
endforeach()
spirv_old_test(spec_constants spirv spec ${SPV_OLD_DIR}/spec_constants.spv)
spirv_old_test(spec_ops spirv spec_ops ${SPV_OLD_DIR}/spec_ops.spv)
spirv_old_test(ops spirv_ops ${SPV_OLD_DIR})
spirv_old_test(narrow spirv_narrow ${SPV_OLD_DIR}/narrow.spv ${SPV_OLD_DIR}/private.spv)
spirv_old_test(constdata spirv_printf constdata ${SPV_OLD_DIR})
spirv_old_test(printf spirv_printf printf ${SPV_OLD_DIR})
spirv_old_test(printf_fp64 spirv_printf printf ${SPV_OLD_DIR}/fp64)
spirv_old_test(math spirv_math ${SPV_OLD_DIR})
spirv_old_test(link spirv_link ${SPV_OLD_DIR})
foreach(k matmul scan iterate black_scholes invariant)
  spirv_old_test(${k} spirv_corpus ${k} ${SPV_OLD_DIR}/${k}.spv)
endforeach()
spirv_old_test(random spirv_random ${SPV_OLD_DIR}/random)
spirv_old_test(loops spirv_loops ${SPV_OLD_DIR}/loops)
spirv_old_test(loops_pipe spirv_loops ${SPV_OLD_DIR}/loops_pipe)
# The module of functions and data only, exporting nothing.
spirv_old_test(nokernels spirv nokernels ${SPV_OLD_DIR}/functions_noexports.spv)
# Every module's older form translates to the same ZE-ISA module, byte for
# byte (or fails as the original does), and has the older features.
add_test(NAME spirv_old_same_code
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/test_spirv_old.py
    --spirv $<TARGET_FILE:zesim-spirv> ${SPV_KERNEL_DIR})
set_tests_properties(spirv_old_same_code PROPERTIES LABELS unit TIMEOUT 300)
# spv_link on the older forms: merged modules through spirv-val (SPIRV.debug
# is left out of a linked module) and the front end.
add_test(NAME spirv_link_old COMMAND test_spirv_link_unit ${SPV_OLD_DIR} ${ZESIM_SPIRV_VAL} 200)
set_tests_properties(spirv_link_old PROPERTIES LABELS unit TIMEOUT 300)
