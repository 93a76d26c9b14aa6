"""runtime_c/plan_fill.c compiled with a small driver: the C host's own scalar-fill code as a test
oracle (bobc_fill_bytes: a fill's four bytes, or its refusal), shared by the tests that hold the
simulator's and the reference host's fills to it."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# plan_fill.h's scalar ops
OPS = {"constant": 1, "step": 2, "add": 3, "subtract": 4, "multiply": 5, "divide": 6, "power": 7, "sqrt": 8}
REFUSED = "refused: "

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "plan_fill.h"
/* argv: encoding (0 binary32, 1 word32), input step, fill step, then op and value (a hex float) per
   term; prints the fill's bytes as hex, or "refused: " and the C host's refusal */
int main(int argc, char **argv)
{
    bobc_scalar_term terms[16];
    uint32_t n = 0;
    for (int i = 4; i + 1 < argc; i += 2, n++) {
        terms[n].op = atoi(argv[i]);
        terms[n].value = strtod(argv[i + 1], NULL);
    }
    bobc_fill f = { 0, strtoull(argv[3], NULL, 10), atoi(argv[1]) ? BOBC_ENCODE_WORD32 : BOBC_ENCODE_BINARY32,
                    n, terms };
    uint8_t out[4];
    char err[512] = "";
    if (bobc_fill_bytes(&f, strtoull(argv[2], NULL, 10), out, err, sizeof err))
        printf("refused: %s", err);
    else
        printf("%02x%02x%02x%02x", out[0], out[1], out[2], out[3]);
    return 0;
}
"""


def compiled(folder: Path):
    """The driver built in `folder`; returns says(encoding, input_step, step, terms) -> its output
    (`terms`: (op name, value) pairs in postfix order; encoding "word32" or "binary32")."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None, "a C compiler is needed (the C host is built with one)"
    (folder / "driver.c").write_text(DRIVER)
    exe = folder / "driver"
    made = subprocess.run([cc, "-std=c11", "-O1", "-I", str(REPO / "runtime_c"), str(folder / "driver.c"),
                           str(REPO / "runtime_c/plan_fill.c"), "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr

    def says(encoding, input_step, step, terms) -> str:
        args = [str(exe), "1" if encoding == "word32" else "0", str(input_step), str(step)]
        for op, value in terms:
            args += [str(OPS[op]), float(value).hex()]
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return says


BATCH_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "plan_fill.h"
/* per stdin line: encoding (0 binary32, 1 word32), input step, fill step, term count, then op and value
   (a hex float) per term; prints per line the fill's bytes as hex, or "refused: " and the C host's refusal */
int main(void)
{
    static bobc_scalar_term terms[256];
    static char number[128];
    int encoding;
    unsigned long long input_step, step;
    unsigned n;
    while (scanf("%d %llu %llu %u", &encoding, &input_step, &step, &n) == 4 && n <= 256) {
        for (unsigned i = 0; i < n; i++) {
            if (scanf("%d %127s", &terms[i].op, number) != 2)
                return 2;
            terms[i].value = strtod(number, NULL);
        }
        bobc_fill f = { 0, step, encoding ? BOBC_ENCODE_WORD32 : BOBC_ENCODE_BINARY32, n, terms };
        uint8_t out[4];
        char err[512] = "";
        if (bobc_fill_bytes(&f, input_step, out, err, sizeof err))
            printf("refused: %s\n", err);
        else
            printf("%02x%02x%02x%02x\n", out[0], out[1], out[2], out[3]);
    }
    return 0;
}
"""


def compiled_batch(folder: Path):
    """The batch driver built in `folder`; returns says(cases) -> one output line per case (a case:
    (encoding, input_step, step, terms), as `compiled`'s says takes them), one process for all."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None, "a C compiler is needed (the C host is built with one)"
    (folder / "batch.c").write_text(BATCH_DRIVER)
    exe = folder / "batch"
    made = subprocess.run([cc, "-std=c11", "-O2", "-I", str(REPO / "runtime_c"), str(folder / "batch.c"),
                           str(REPO / "runtime_c/plan_fill.c"), "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr

    def says(cases) -> list[str]:
        text = "".join(f"{1 if encoding == 'word32' else 0} {input_step} {step} {len(terms)} "
                       + " ".join(f"{OPS[op]} {float(value).hex()}" for op, value in terms) + "\n"
                       for encoding, input_step, step, terms in cases)
        lines = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True).stdout.splitlines()
        assert len(lines) == len(cases)
        return lines
    return says
