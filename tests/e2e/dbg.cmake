# zesim-dbg (tools/dbg): its ELF/DWARF reader against binutils, its command syntax,
# and the debugger driven through tmux against a target program (labels unit, e2e;
# the tmux test skips, exit 77, while the driver does not offer program debugging).
foreach(suffix "" "-san")
  add_executable(test_dbg_cmd${suffix} ${PROJECT_SOURCE_DIR}/tests/unit/test_dbg_cmd.c)
  target_link_libraries(test_dbg_cmd${suffix} PRIVATE zesim_dbg${suffix})
  add_test(NAME dbg_cmd${suffix} COMMAND test_dbg_cmd${suffix})
endforeach()
add_test(NAME dbg_lines
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/test_dbg_lines.py
    --dbg $<TARGET_FILE:zesim-dbg> --dbg-san $<TARGET_FILE:zesim-dbg-san>
    --as $<TARGET_FILE:zesim-as> --spirv $<TARGET_FILE:zesim-spirv>
    ${SPV_KERNEL_DIR}/saxpy_g.spv ${SPV_KERNEL_DIR}/elementwise_g.spv)
set_tests_properties(dbg_cmd dbg_lines PROPERTIES LABELS "unit;dbg" TIMEOUT 300)
set_tests_properties(dbg_cmd-san PROPERTIES LABELS "sanitize;dbg")

set(DBG_ELF ${CMAKE_CURRENT_BINARY_DIR}/dbg.elf)
add_custom_command(OUTPUT ${DBG_ELF}
  COMMAND zesim-as -g -o ${DBG_ELF} ${CMAKE_CURRENT_SOURCE_DIR}/dbg.zeasm
  DEPENDS zesim-as ${CMAKE_CURRENT_SOURCE_DIR}/dbg.zeasm
  COMMENT "Assembling the zesim-dbg test kernel with -g")
set(DBG_CALL_ELF ${CMAKE_CURRENT_BINARY_DIR}/dbg_call.elf)
add_custom_command(OUTPUT ${DBG_CALL_ELF}
  COMMAND zesim-as -g -o ${DBG_CALL_ELF} ${CMAKE_CURRENT_SOURCE_DIR}/dbg_call.zeasm
  DEPENDS zesim-as ${CMAKE_CURRENT_SOURCE_DIR}/dbg_call.zeasm
  COMMENT "Assembling the zesim-dbg calla test kernel with -g")
add_custom_target(e2e_dbg_kernel DEPENDS ${DBG_ELF} ${DBG_CALL_ELF})
add_executable(e2e_dbg_target dbg_target.c)
target_include_directories(e2e_dbg_target PRIVATE ${E2E_LEVEL_ZERO_INCLUDE})
target_compile_definitions(e2e_dbg_target PRIVATE _GNU_SOURCE)
target_link_libraries(e2e_dbg_target PRIVATE ${ZE_LOADER_LIB} m)
add_dependencies(e2e_dbg_target ${E2E_STACK} e2e_dbg_kernel zesim-dbg)
add_test(NAME e2e_dbg_tmux
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/dbg_tmux.py --gpu $<TARGET_FILE:zesim-gpu>
    --preload $<TARGET_FILE:zesim_preload> --driver $<TARGET_FILE:ze_zesim> --dbg $<TARGET_FILE:zesim-dbg>
    --target $<TARGET_FILE:e2e_dbg_target> --module ${DBG_ELF} --source ${CMAKE_CURRENT_SOURCE_DIR}/dbg.zeasm
    --saxpy-spv ${SPV_KERNEL_DIR}/saxpy_g.spv --saxpy-source ${SPV_KERNEL_SRC}/saxpy.cl
    --call-module ${DBG_CALL_ELF} --call-source ${CMAKE_CURRENT_SOURCE_DIR}/dbg_call.zeasm
    --work ${CMAKE_CURRENT_BINARY_DIR}/dbg_tmux)
set_tests_properties(e2e_dbg_tmux PROPERTIES LABELS "e2e;dbg" TIMEOUT 300 SKIP_RETURN_CODE 77)
