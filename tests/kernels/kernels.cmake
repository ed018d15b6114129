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

foreach(k vadd saxpy elementwise reduce histogram builtins ops ops2)
  spv_kernel(${k} ${k})
endforeach()
spv_kernel(cl2 cl2 -cl-std=CL2.0 -Xclang -cl-ext=+cl_khr_subgroups)
# What phase 1 refuses, each as a module of its own.
spv_kernel(unsupported_sin unsupported -DUSE_SIN)
spv_kernel(unsupported_double unsupported -DUSE_DOUBLE)
spv_kernel(unsupported_private_array unsupported -DUSE_PRIVATE_ARRAY)
spv_kernel(unsupported_char unsupported -DUSE_CHAR)

# Kernels written in SPIR-V assembly (what OpenCL C cannot express).
foreach(k spec_constants asm_ops)
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

get_property(SPV_KERNEL_FILES GLOBAL PROPERTY SPV_KERNEL_FILES)
add_custom_target(spirv_kernels ALL DEPENDS ${SPV_KERNEL_FILES})
