# Tests of the driver's SPIR-V front end (driver/README.md, "SPIR-V front end"),
# included by CMakeLists.txt.  The kernels are OpenCL C in tests/kernels/,
# compiled to SPIR-V at build time (tests/kernels/kernels.cmake).
include(${PROJECT_SOURCE_DIR}/tests/kernels/kernels.cmake)

foreach(t spirv spirv_ops spirv_errors)
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
e2e_test(spirv_spec_constants spirv spec ${SPV_KERNEL_DIR}/spec_constants.spv)
# Malformed and unsupported modules: error codes and build logs.
e2e_test(spirv_errors spirv_errors ${SPV_KERNEL_DIR})

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

# SIMD8 and SIMD16 translations of the phase-1 kernels on the Python ISS.
add_test(NAME spirv_iss
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/spirv_iss.py
    --spirv $<TARGET_FILE:zesim-spirv> --kernels ${SPV_KERNEL_DIR})
set_tests_properties(spirv_iss PROPERTIES LABELS unit TIMEOUT 600)
