# Installs the pinned Node packages for the compat tests, exactly as package-lock.json says:
# copies package.json and package-lock.json into BINARY_DIR and runs `npm ci` there (npm ci
# refuses to run when the two disagree, and never rewrites the lock file).
#
#   cmake -DSOURCE_DIR=<tests/compat/node> -DBINARY_DIR=<dir> -DNPM=<npm> -P npm_ci.cmake
foreach(required SOURCE_DIR BINARY_DIR NPM)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "npm_ci.cmake needs -D${required}=...")
  endif()
endforeach()

file(MAKE_DIRECTORY ${BINARY_DIR})
file(COPY ${SOURCE_DIR}/package.json ${SOURCE_DIR}/package-lock.json DESTINATION ${BINARY_DIR})
execute_process(
  COMMAND ${NPM} ci --no-audit --no-fund --loglevel=warn
  WORKING_DIRECTORY ${BINARY_DIR}
  RESULT_VARIABLE npm_status)
if(NOT npm_status EQUAL 0)
  message(FATAL_ERROR "npm ci failed (${npm_status}) in ${BINARY_DIR}")
endif()
