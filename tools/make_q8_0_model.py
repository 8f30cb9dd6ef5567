#!/usr/bin/env python3
"""Make a Q8_0 copy of a Q4_1 GGUF model, for CPU benchmarks.

Why: the decode benchmarks want a Q8_0 model of the same size and architecture as the default
model (SmolLM2-135M-Instruct, Q4_1), so that the Q8_0 kernels can be timed on exactly the same
shapes. This script reads the Q4_1 file and writes a new GGUF in which every Q4_1 tensor is
dequantized and requantized to Q8_0; every other tensor (F32 norms, the Q8_0 token embedding) is
copied byte for byte, with the same type and shape. All metadata key/values are copied (arrays
included: tokenizer tokens, merges, token types, chat template, ...), in the same order, as is the
tensor order. The one metadata change is general.file_type, set to MOSTLY_Q8_0 so the file does
not claim to be Q4_1.

Requantizing from Q4_1 keeps Q4_1's rounding error (Q8_0 represents the Q4_1 values almost
exactly), so the output is for speed measurements, not for judging Q8_0 quality: a Q8_0 made from
the original F16/BF16 weights would be more accurate.

Usage: python3 tools/make_q8_0_model.py INPUT.gguf OUTPUT.gguf
Needs the PyPI packages `gguf` (gguf-py) and `numpy`.
"""

import argparse
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter


def field_value(field):
    """The value of a metadata field, as GGUFWriter.add_key_value wants it."""
    return field.contents()


def main() -> int:
    ap = argparse.ArgumentParser(description="Requantize the Q4_1 tensors of a GGUF model to Q8_0.")
    ap.add_argument("input", help="input GGUF (Q4_1 model)")
    ap.add_argument("output", help="output GGUF (Q8_0 model)")
    args = ap.parse_args()

    reader = GGUFReader(args.input, "r")
    if reader.endianess != gguf.GGUFEndian.LITTLE:
        print("error: only little-endian GGUF files are supported", file=sys.stderr)
        return 1

    arch_field = reader.get_field(gguf.Keys.General.ARCHITECTURE)
    if arch_field is None:
        print("error: input has no general.architecture", file=sys.stderr)
        return 1
    arch = arch_field.contents()

    writer = GGUFWriter(args.output, arch)  # writes general.architecture itself

    # Metadata: copy everything except the reader's GGUF.* pseudo-fields and the fields the writer
    # produces on its own (architecture above, alignment below).
    for field in reader.fields.values():
        name = field.name
        if name.startswith("GGUF.") or name == gguf.Keys.General.ARCHITECTURE:
            continue
        if name == gguf.Keys.General.ALIGNMENT:
            writer.add_custom_alignment(int(field.contents()))
            continue
        vtype = field.types[0]
        sub_type = field.types[-1] if vtype == GGUFValueType.ARRAY else None
        value = field_value(field)
        if name == gguf.Keys.General.FILE_TYPE:
            value = int(gguf.LlamaFileType.MOSTLY_Q8_0)
        writer.add_key_value(name, value, vtype, sub_type=sub_type)

    # Tensors, in the input's order. reader tensor.shape is ggml order (ne0 first); tensor.data
    # is a numpy array in numpy order (ne reversed), for quantized types uint8 with the last axis
    # in bytes. add_tensor(..., raw_dtype=T) on a uint8 array turns that byte shape back into the
    # element shape, so passing the arrays as they are keeps every shape right.
    n_conv = 0
    for t in reader.tensors:
        if t.tensor_type == GGMLQuantizationType.Q4_1:
            values = gguf.quants.dequantize(t.data, GGMLQuantizationType.Q4_1)  # float32, numpy order
            q = gguf.quants.quantize(values, GGMLQuantizationType.Q8_0)         # uint8, byte shape
            if tuple(values.shape) != tuple(int(d) for d in reversed(t.shape)):
                raise RuntimeError(f"{t.name}: unexpected dequantized shape {values.shape}")
            writer.add_tensor(t.name, q, raw_dtype=GGMLQuantizationType.Q8_0)
            n_conv += 1
        elif t.tensor_type in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
            writer.add_tensor(t.name, np.asarray(t.data))
        else:
            writer.add_tensor(t.name, np.asarray(t.data), raw_dtype=t.tensor_type)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"wrote {args.output}: {len(reader.tensors)} tensors, {n_conv} converted Q4_1 -> Q8_0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
