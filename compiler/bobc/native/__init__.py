"""Native physical programs (Runtime.NativePhysicalProgram) as executables.

interpreter.py builds runtime_c's native host interpreter once (cached by content);
writer.py appends a program to it (the handler behind `compiler-native-encode (family
NativePhysicalProgram)`); program.py decodes and checks a program's canonical bytes the
way the C host does (runtime_c/native_program.c).  docs/native-host.md says how they fit.
"""
