# wasm_matches_native.cmake (ctest explorer_wasm_matches_native): runs the WebAssembly build of
# the reference program under Node.js and holds what it prints to what the native build printed
# (REFERENCE), number by number, with compare.js.
execute_process(COMMAND ${NODE} --no-experimental-fetch ${EXE} OUTPUT_FILE ${SCRATCH}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the WebAssembly reference program failed (${rc})")
endif()
if(NOT EXISTS ${REFERENCE})
  message(FATAL_ERROR "no native reference at ${REFERENCE}: build the release preset's "
                      "explorer_reference_json first (tutorials/explorer/build.sh does)")
endif()
execute_process(COMMAND ${NODE} -e "
const {compareNumbers} = require(process.argv[1]);
const fs = require('fs');
const r = compareNumbers(JSON.parse(fs.readFileSync(process.argv[2], 'utf8')),
                         JSON.parse(fs.readFileSync(process.argv[3], 'utf8')));
console.log(r.values + ' numbers: ' + r.identical + ' the same float, the largest difference ' +
            r.worst.toExponential(2) + (r.where ? ' (' + r.where + ')' : ''));
if (!r.ok) { console.log('mismatch: ' + r.mismatch); process.exit(1); }
" ${COMPARE} ${REFERENCE} ${SCRATCH} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the WebAssembly build's numbers differ from the native build's")
endif()
