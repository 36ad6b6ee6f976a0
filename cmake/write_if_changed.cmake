# fdyno_write_if_changed(PATH TEXT): writes TEXT to PATH only when the file's text differs, so a
# generated file that did not change rebuilds nothing. For the cmake -P scripts of this folder.
function(fdyno_write_if_changed path text)
  set(old "")
  if(EXISTS "${path}")
    file(READ "${path}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
