# OpenCL C test kernels of the SPIR-V front end (driver/README.md), compiled at
# build time with Debian's clang-14 and llvm-spirv-14 and validated with
# spirv-val; a module that fails validation is not produced.  Included by
# tests/e2e/CMakeLists.txt; the modules go to build/tests/kernels/NAME.spv.
find_program(ZESIM_CLANG14 clang-14 DOC "Debian clang-14 (OpenCL C to LLVM IR)" REQUIRED)
find_program(ZESIM_LLVM_SPIRV llvm-spirv-14 DOC "Debian llvm-spirv-14 (LLVM IR to SPIR-V)" REQUIRED)
find_program(ZESIM_SPIRV_VAL spirv-val DOC "spirv-val from Debian spirv-tools" REQUIRED)
find_program(ZESIM_SPIRV_AS spirv-as DOC "spirv-as from Debian spirv-tools" REQUIRED)

set(SPV_KERNEL_SRC ${PROJECT_SOURCE_DIR}/tests/kernels)
set(SPV_KERNEL_DIR ${CMAKE_BINARY_DIR}/tests/kernels)
file(MAKE_DIRECTORY ${SPV_KERNEL_DIR})

# spv_kernel(NAME SOURCE [clang options...]): SOURCE.cl -> NAME.spv
function(spv_kernel name source)
  set(bc ${SPV_KERNEL_DIR}/${name}.bc)
  set(raw ${SPV_KERNEL_DIR}/${name}.unvalidated.spv)
  set(spv ${SPV_KERNEL_DIR}/${name}.spv)
  add_custom_command(OUTPUT ${spv}
    COMMAND ${ZESIM_CLANG14} -cl-std=CL1.2 -target spir64 -O2 -emit-llvm -c ${ARGN}
      ${SPV_KERNEL_SRC}/${source}.cl -o ${bc}
    COMMAND ${ZESIM_LLVM_SPIRV} ${bc} -o ${raw}
    COMMAND ${ZESIM_SPIRV_VAL} ${raw}
    COMMAND ${CMAKE_COMMAND} -E rename ${raw} ${spv}
    DEPENDS ${SPV_KERNEL_SRC}/${source}.cl
    COMMENT "Compiling OpenCL C kernel ${name} to SPIR-V"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${spv})
endfunction()

foreach(k vadd saxpy elementwise reduce histogram builtins ops ops2 narrow div64 math_ptr regress functions)
  spv_kernel(${k} ${k})
endforeach()
# -fno-builtin: no memset/memcpy idioms on private arrays, which llvm-spirv-14
# translates with OpBitcasts among the OpVariables, a layout spirv-val rejects
# (the front end itself accepts it and implements OpCopyMemorySized).
spv_kernel(private private -fno-builtin)
# The OpenCL.std functions computed by code sequences (tests/e2e/test_spirv_math.c).
spv_kernel(math math)
spv_kernel(cl2 cl2 -cl-std=CL2.0 -Xclang -cl-ext=+cl_khr_subgroups)
# Pointers stored in memory (tests/e2e/test_spirv_pointers.c): OpenCL C 2.0,
# which allows pointer-to-pointer kernel arguments.
spv_kernel(pointers pointers -cl-std=CL2.0)
spv_kernel(pointers_bad pointers_bad -cl-std=CL2.0 -Wno-incompatible-pointer-types-discards-qualifiers)
# Program-scope variables and printf (tests/e2e/test_spirv_printf.c); printf
# without fp64, as for this device (floats reach printf as floats).
spv_kernel(constdata constdata)
spv_kernel(constdata20 constdata -cl-std=CL2.0)
spv_kernel(printf printf -Xclang -cl-ext=-cl_khr_fp64 -Wno-format -Wno-format-invalid-specifier)
# The same with clang's defaults (fp64 on: floats reach printf as doubles, the
# module declares Float64), in a folder of its own under the same name.
file(MAKE_DIRECTORY ${SPV_KERNEL_DIR}/fp64)
add_custom_command(OUTPUT ${SPV_KERNEL_DIR}/fp64/printf.spv
  COMMAND ${ZESIM_CLANG14} -cl-std=CL1.2 -target spir64 -O2 -emit-llvm -c -Wno-format -Wno-format-invalid-specifier
    ${SPV_KERNEL_SRC}/printf.cl -o ${SPV_KERNEL_DIR}/fp64/printf.bc
  COMMAND ${ZESIM_LLVM_SPIRV} ${SPV_KERNEL_DIR}/fp64/printf.bc -o ${SPV_KERNEL_DIR}/fp64/printf.unvalidated.spv
  COMMAND ${ZESIM_SPIRV_VAL} ${SPV_KERNEL_DIR}/fp64/printf.unvalidated.spv
  COMMAND ${CMAKE_COMMAND} -E rename ${SPV_KERNEL_DIR}/fp64/printf.unvalidated.spv ${SPV_KERNEL_DIR}/fp64/printf.spv
  DEPENDS ${SPV_KERNEL_SRC}/printf.cl
  COMMENT "Compiling OpenCL C kernel printf to SPIR-V with fp64"
  VERBATIM)
set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${SPV_KERNEL_DIR}/fp64/printf.spv)
# Modules importing each other's functions (tests/e2e/test_spirv_link.c).
foreach(k link_main link_lib link_lib2 link_bad)
  spv_kernel(${k} ${k})
endforeach()
spv_kernel(link_main_scale link_main -DONLY_SCALE)
# Application kernels (tests/e2e/test_spirv_corpus.c, bench/compile.py).
foreach(k matmul scan iterate black_scholes invariant)
  spv_kernel(${k} ${k})
endforeach()
# What the front end refuses, each as a module of its own.
spv_kernel(unsupported_big_private unsupported -DUSE_BIG_PRIVATE)
spv_kernel(unsupported_double unsupported -DUSE_DOUBLE)
spv_kernel(unsupported_half unsupported -DUSE_HALF)
spv_kernel(unsupported_image unsupported -DUSE_IMAGE)

# Kernels written in SPIR-V assembly (what OpenCL C cannot express).
foreach(k spec_constants spec_ops asm_ops returns link_spec_main link_spec_lib link_var ptr_asm)
  set(raw ${SPV_KERNEL_DIR}/${k}.unvalidated.spv)
  add_custom_command(OUTPUT ${SPV_KERNEL_DIR}/${k}.spv
    COMMAND ${ZESIM_SPIRV_AS} ${SPV_KERNEL_SRC}/${k}.spvasm -o ${raw}
    COMMAND ${ZESIM_SPIRV_VAL} ${raw}
    COMMAND ${CMAKE_COMMAND} -E rename ${raw} ${SPV_KERNEL_DIR}/${k}.spv
    DEPENDS ${SPV_KERNEL_SRC}/${k}.spvasm
    COMMENT "Assembling SPIR-V kernel ${k}"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${SPV_KERNEL_DIR}/${k}.spv)
endforeach()

# With -g (debug line mapping, tests/unit/test_spirv_lines.py).  Not checked by
# spirv-val: llvm-spirv-14 writes OpenCL.DebugInfo.100 instructions that the
# Debian spirv-val rejects (e.g. "DebugTypePointer: expected operand Base Type
# must be a result id of DebugTypeBasic"); the front end skips that set.
foreach(k saxpy elementwise)
  add_custom_command(OUTPUT ${SPV_KERNEL_DIR}/${k}_g.spv
    COMMAND ${ZESIM_CLANG14} -cl-std=CL1.2 -target spir64 -O2 -g -emit-llvm -c
      ${SPV_KERNEL_SRC}/${k}.cl -o ${SPV_KERNEL_DIR}/${k}_g.bc
    COMMAND ${ZESIM_LLVM_SPIRV} ${SPV_KERNEL_DIR}/${k}_g.bc -o ${SPV_KERNEL_DIR}/${k}_g.spv
    DEPENDS ${SPV_KERNEL_SRC}/${k}.cl
    COMMENT "Compiling OpenCL C kernel ${k} to SPIR-V with -g"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${SPV_KERNEL_DIR}/${k}_g.spv)
endforeach()

# Random expression kernels with their expected results (random.ref), made by
# tests/kernels/gen_random.py with a fixed seed and compiled as above, for
# tests/e2e/test_spirv_random.c.  A folder of their own: the tests that read
# every module of this one leave them out.  -fno-vectorize: the loop vectorizer
# turns char/short reductions into llvm.vector.reduce.* calls, which
# llvm-spirv-14 cannot translate.
set(SPV_RANDOM_DIR ${SPV_KERNEL_DIR}/random)
set(SPV_RANDOM_SEED 1)
set(SPV_RANDOM_MODULES 10)
math(EXPR last "${SPV_RANDOM_MODULES} - 1")
set(sources)
foreach(m RANGE ${last})
  list(APPEND sources ${SPV_RANDOM_DIR}/random_${m}.cl)
endforeach()
add_custom_command(OUTPUT ${sources} ${SPV_RANDOM_DIR}/random.ref
  COMMAND ${Python3_EXECUTABLE} ${SPV_KERNEL_SRC}/gen_random.py --out ${SPV_RANDOM_DIR}
    --seed ${SPV_RANDOM_SEED} --modules ${SPV_RANDOM_MODULES}
  DEPENDS ${SPV_KERNEL_SRC}/gen_random.py
  COMMENT "Generating random expression kernels (seed ${SPV_RANDOM_SEED})"
  VERBATIM)
set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${SPV_RANDOM_DIR}/random.ref)
foreach(m RANGE ${last})
  set(name ${SPV_RANDOM_DIR}/random_${m})
  add_custom_command(OUTPUT ${name}.spv
    COMMAND ${ZESIM_CLANG14} -cl-std=CL1.2 -target spir64 -O2 -emit-llvm -c -ffp-contract=off -w -fno-vectorize
      ${name}.cl -o ${name}.bc
    COMMAND ${ZESIM_LLVM_SPIRV} ${name}.bc -o ${name}.unvalidated.spv
    COMMAND ${ZESIM_SPIRV_VAL} ${name}.unvalidated.spv
    COMMAND ${CMAKE_COMMAND} -E rename ${name}.unvalidated.spv ${name}.spv
    DEPENDS ${name}.cl
    COMMENT "Compiling random expression kernels random_${m} to SPIR-V"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${name}.spv)
endforeach()

# Random pointer-chain kernels with their expected results (ptr_random.ref),
# made by tests/kernels/gen_pointers.py with a fixed seed, for
# tests/e2e/test_spirv_ptr_random.c (OpenCL C 2.0: pointer-to-pointer arguments).
set(SPV_PTR_RANDOM_DIR ${SPV_KERNEL_DIR}/ptr_random)
set(SPV_PTR_RANDOM_MODULES 3)
math(EXPR last "${SPV_PTR_RANDOM_MODULES} - 1")
set(sources)
foreach(m RANGE ${last})
  list(APPEND sources ${SPV_PTR_RANDOM_DIR}/ptr_random_${m}.cl)
endforeach()
add_custom_command(OUTPUT ${sources} ${SPV_PTR_RANDOM_DIR}/ptr_random.ref
  COMMAND ${Python3_EXECUTABLE} ${SPV_KERNEL_SRC}/gen_pointers.py --out ${SPV_PTR_RANDOM_DIR}
    --seed 1 --modules ${SPV_PTR_RANDOM_MODULES}
  DEPENDS ${SPV_KERNEL_SRC}/gen_pointers.py
  COMMENT "Generating random pointer-chain kernels"
  VERBATIM)
set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${SPV_PTR_RANDOM_DIR}/ptr_random.ref)
foreach(m RANGE ${last})
  set(name ${SPV_PTR_RANDOM_DIR}/ptr_random_${m})
  add_custom_command(OUTPUT ${name}.spv
    COMMAND ${ZESIM_CLANG14} -cl-std=CL2.0 -target spir64 -O2 -emit-llvm -c -w ${name}.cl -o ${name}.bc
    COMMAND ${ZESIM_LLVM_SPIRV} ${name}.bc -o ${name}.unvalidated.spv
    COMMAND ${ZESIM_SPIRV_VAL} ${name}.unvalidated.spv
    COMMAND ${CMAKE_COMMAND} -E rename ${name}.unvalidated.spv ${name}.spv
    DEPENDS ${name}.cl
    COMMENT "Compiling random pointer-chain kernels ptr_random_${m} to SPIR-V"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${name}.spv)
endforeach()

# Random counted-loop kernels (tests/kernels/gen_loops.py, fixed seed) for
# tests/e2e/test_spirv_loops.c: the generator compiles the modules itself, as
# above (replacing the kernels the toolchain fails on), and their host
# reference with the C compiler, which writes the expected results (loops.ref).
set(SPV_LOOPS_DIR ${SPV_KERNEL_DIR}/loops)
set(SPV_LOOPS_SEED 1)
set(SPV_LOOPS_MODULES 6)
math(EXPR last "${SPV_LOOPS_MODULES} - 1")
set(outputs ${SPV_LOOPS_DIR}/loops.ref)
foreach(m RANGE ${last})
  list(APPEND outputs ${SPV_LOOPS_DIR}/loops_${m}.spv)
endforeach()
add_custom_command(OUTPUT ${outputs}
  COMMAND ${Python3_EXECUTABLE} ${SPV_KERNEL_SRC}/gen_loops.py --out ${SPV_LOOPS_DIR}
    --seed ${SPV_LOOPS_SEED} --modules ${SPV_LOOPS_MODULES} --kernels 16 --cc ${CMAKE_C_COMPILER}
    --clang ${ZESIM_CLANG14} --llvm-spirv ${ZESIM_LLVM_SPIRV} --spirv-val ${ZESIM_SPIRV_VAL}
  DEPENDS ${SPV_KERNEL_SRC}/gen_loops.py
  COMMENT "Generating counted-loop kernels (seed ${SPV_LOOPS_SEED})"
  VERBATIM)
set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${outputs})

# The same for the loops that run global loads one iteration ahead (gen_loops.py
# --pipe: barrier loops staging tiles in local memory, loops too large to
# unroll or not counted), on 4 work groups.
set(SPV_LOOPS_PIPE_DIR ${SPV_KERNEL_DIR}/loops_pipe)
set(outputs ${SPV_LOOPS_PIPE_DIR}/loops.ref ${SPV_LOOPS_PIPE_DIR}/loops_0.spv ${SPV_LOOPS_PIPE_DIR}/loops_1.spv)
add_custom_command(OUTPUT ${outputs}
  COMMAND ${Python3_EXECUTABLE} ${SPV_KERNEL_SRC}/gen_loops.py --pipe --out ${SPV_LOOPS_PIPE_DIR}
    --seed ${SPV_LOOPS_SEED} --modules 2 --kernels 12 --items 256 --cc ${CMAKE_C_COMPILER}
    --clang ${ZESIM_CLANG14} --llvm-spirv ${ZESIM_LLVM_SPIRV} --spirv-val ${ZESIM_SPIRV_VAL}
  DEPENDS ${SPV_KERNEL_SRC}/gen_loops.py
  COMMENT "Generating pipelined-loop kernels (seed ${SPV_LOOPS_SEED})"
  VERBATIM)
set_property(GLOBAL APPEND PROPERTY SPV_KERNEL_FILES ${outputs})

# Every module above rewritten into the form older llvm-spirv releases wrote
# (tests/kernels/old_spirv.py: SPIR-V 1.0, built-ins in UniformConstant,
# decoration groups, forward pointers, SPIRV.debug, ArbitraryPrecisionIntegersINTEL),
# in the same places under old/, each checked by spirv-val without its
# SPIRV.debug instructions (which spirv-val refuses); functions.spv also
# without its exports (a module of functions only that exports nothing).
set(SPV_OLD_DIR ${SPV_KERNEL_DIR}/old)
get_property(SPV_KERNEL_FILES GLOBAL PROPERTY SPV_KERNEL_FILES)
add_custom_command(OUTPUT ${SPV_OLD_DIR}/old.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${SPV_OLD_DIR}
  COMMAND ${Python3_EXECUTABLE} ${SPV_KERNEL_SRC}/old_spirv.py --spirv-val ${ZESIM_SPIRV_VAL}
    --tree ${SPV_KERNEL_DIR} ${SPV_OLD_DIR}
  COMMAND ${Python3_EXECUTABLE} ${SPV_KERNEL_SRC}/old_spirv.py --spirv-val ${ZESIM_SPIRV_VAL} --no-exports
    ${SPV_KERNEL_DIR}/functions.spv ${SPV_OLD_DIR}/functions_noexports.spv
  COMMAND ${CMAKE_COMMAND} -E touch ${SPV_OLD_DIR}/old.stamp
  DEPENDS ${SPV_KERNEL_FILES} ${SPV_KERNEL_SRC}/old_spirv.py
  COMMENT "Rewriting the SPIR-V test modules into the older form (old_spirv.py)"
  VERBATIM)
add_custom_target(spirv_kernels ALL DEPENDS ${SPV_KERNEL_FILES} ${SPV_OLD_DIR}/old.stamp)
