// Package refimport turns a task set in the reference implementation's
// layout (SakanaAI/mass tasks/: bare/query{q}.txt, initial/query{q}_ourTeam.txt,
// splits.json, teacher_directive.txt) into mass task specs, one folder per
// task: task.yaml, prompt.txt (the bare query, byte-exact), workflow.txt
// (the v0 design cut from the initial file) and directive.txt (the teacher
// directive, verbatim). It reports what has no mass equivalent.
package refimport
