# -DLPX_SANITIZE=ON builds the whole tree (core, plugins, tests) with ASan + UBSan.
if(LPX_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
  set(LPX_SANITIZERS "address,undefined")
else()
  set(LPX_SANITIZERS "none")
endif()
