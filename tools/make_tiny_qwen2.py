"""A tiny random qwen2 model (2 layers, 64 wide, f32, Q/K/V biases, NeoX rope) with SmolLM2's
tokenizer, for checking LPX's qwen2 path against llama.cpp (no real qwen2 GGUF is available here).

    python3 tools/make_tiny_qwen2.py  (needs the PyPI packages gguf and numpy; writes /tmp/qwen/qwen2-tiny.gguf)

Deterministic (seed 7). Not used by the tests: the file is 26 MiB.
"""
import os

import gguf
import numpy as np
src = gguf.GGUFReader(os.path.join(os.path.dirname(__file__), '..', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf'))
os.makedirs('/tmp/qwen', exist_ok=True)
w = gguf.GGUFWriter('/tmp/qwen/qwen2-tiny.gguf', 'qwen2')
rng = np.random.default_rng(7)
E, L, H, KV, FF = 64, 2, 4, 2, 128
D = E // H
w.add_block_count(L); w.add_context_length(512); w.add_embedding_length(E)
w.add_feed_forward_length(FF); w.add_head_count(H); w.add_head_count_kv(KV)
w.add_rope_freq_base(1000000.0); w.add_layer_norm_rms_eps(1e-6)
for field in src.fields.values():
    if not field.name.startswith('tokenizer.'): continue
    t = field.types[0]
    if t == gguf.GGUFValueType.ARRAY:
        et = field.types[1]
        vals = [field.parts[i] for i in field.data]
        if et == gguf.GGUFValueType.STRING:
            w.add_array(field.name, [bytes(v).decode('utf-8') for v in vals])
        else:
            w.add_array(field.name, [v.tolist()[0] for v in vals])
    elif t == gguf.GGUFValueType.STRING:
        w.add_string(field.name, bytes(field.parts[field.data[0]]).decode('utf-8'))
    elif t == gguf.GGUFValueType.UINT32:
        w.add_uint32(field.name, int(field.parts[field.data[0]][0]))
    elif t == gguf.GGUFValueType.BOOL:
        w.add_bool(field.name, bool(field.parts[field.data[0]][0]))
V = 49152
def t(name, *shape, scale=0.2):
    w.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))
t('token_embd.weight', V, E, scale=1.0)
w.add_tensor('output_norm.weight', (1 + 0.1 * rng.standard_normal(E)).astype(np.float32))
t('output.weight', V, E)
for l in range(L):
    b = f'blk.{l}.'
    w.add_tensor(b + 'attn_norm.weight', (1 + 0.1 * rng.standard_normal(E)).astype(np.float32))
    t(b + 'attn_q.weight', H * D, E); t(b + 'attn_k.weight', KV * D, E); t(b + 'attn_v.weight', KV * D, E)
    t(b + 'attn_q.bias', H * D, scale=0.5); t(b + 'attn_k.bias', KV * D, scale=0.5); t(b + 'attn_v.bias', KV * D, scale=0.5)
    t(b + 'attn_output.weight', E, H * D)
    w.add_tensor(b + 'ffn_norm.weight', (1 + 0.1 * rng.standard_normal(E)).astype(np.float32))
    t(b + 'ffn_gate.weight', FF, E); t(b + 'ffn_up.weight', FF, E); t(b + 'ffn_down.weight', E, FF)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
