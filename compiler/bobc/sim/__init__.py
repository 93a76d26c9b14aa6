"""A functional simulator for bobc's device images: sm_86 without an sm_86.

It executes a build's program, QMD, pushbuffer and GPFIFO images the way the
GPU does, reading every bit through its own declarations of NVIDIA's formats
(never bobc.nvidia's or bobc.sass's tables), so an encoder's mistake shows up
as a wrong launch, a wrong instruction or a wrong result.  One module per
concern (docs/simulator.md):

- faults: what the simulator reports (hazards, out-of-bounds accesses, ...)
- limits: its step limit, readable without NumPy (`bobc --help` names it)
- memory: GPU virtual memory as the host maps it, with bounds checking
- channel: GPFIFO entries -> pushbuffer methods -> semaphores and launches
- qmd_fields, qmd_reader: a launch from its QMD's documented bit positions
- sass_frontend: instructions from NVIDIA's nvdisasm text, control codes from the raw bits
- latencies, hazards: the control-code checker with its own latency rules
- executor: the threads of a launch side by side in NumPy (blocks, shared memory, barriers, tensor cores)
- kernel: one kernel run alone (SASS text, a cubin or code words; named NumPy buffers in and out)
- host_adapter: the one place that reads the typed host plan (buffers, fills, the lowered steps)
- invocation: a whole host invocation (files in, files out), one handler per step kind as runtime_c/plan_host.c
"""
