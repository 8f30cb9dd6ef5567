/* LPX plugin ABI version.
 *
 * Policy (enforced by the host's loader, see docs/plugin-abi.md):
 *   - A MINOR bump only appends: new fields at the end of a struct, new entries at the end of a
 *     function table, new enum values. Nothing is removed, reordered or re-typed.
 *   - A MAJOR bump is the only way to break compatibility.
 *   - The host refuses a plugin whose major differs from its own, or whose minor is newer than its
 *     own (the plugin may rely on entries this host does not have). An older minor is accepted; the
 *     host then never reads a field or calls an entry added after that minor.
 *
 * Every field and table entry documents the minor that added it ("since 2.N"); a "since 1.N"
 * left in a header that 2.0 did not redo means "in every 2.x".
 *
 * History:
 *   1.0  descriptor, host API, sampler / transport / model-format / quant-backend tables
 *   1.1  lpx_plugin_descriptor.validate_options
 *   1.2  the decode engine (lpx/engine.h) for transports; backend ops for the engine
 *   1.3  engine: token log-probabilities, request flags, stats, tokenize/detokenize; the run
 *        context's resolved pipeline and host version
 *   1.4  quant backends: optional device models (model_load / model_forward / model_free),
 *        whole forward steps on a backend's own device memory (cuda)
 *   1.5  sampling programs (lpx/kinds/sampling_program.h): samplers describe themselves as
 *        standard operations (standard_op, draw_uniform); device models run the programs
 *        (lpx_forward_args.sampling), so only token ids cross to the host
 *   2.0  an architecture-neutral backend interface: quant backends get the transformer
 *        description of lpx/kinds/transformer.h (per-layer tensors, windows, rope, norms,
 *        activations, scales, soft caps, with struct sizes and a layer stride) instead of the
 *        llama-only lpx_llama_model_desc, say which model features they run
 *        (model_features), and gain geglu; attention takes a window and a soft cap, rope an
 *        attn_factor; lpx_status gains struct_size and field (the request field at fault) and
 *        the codes UNAVAILABLE and CONFLICT. 1.x plugins are refused: rebuild them against
 *        SDK 2.x
 *   2.1  grammars: samplers may take the model's vocabulary (lpx_sampler_api.bind_vocabulary,
 *        lpx_vocabulary), and a request may carry a grammar or a JSON Schema
 *        (lpx_sampling_overrides.grammar, LPX_SET_GRAMMAR); LPX_REQUEST_PARSE_SPECIAL reads
 *        special-token texts in a prompt as those tokens; a chat request may carry its
 *        conversation as JSON with tool calls and results (lpx_request.messages_json) and the
 *        tools offered (tools_json), which the chat template renders
 *   2.2  tool calling: structural-tag grammars (LPX_GRAMMAR_STRUCTURAL_TAG) and the chat
 *        template's source in lpx_engine_info.chat_template; samplers see how many tokens a
 *        sequence may still generate (lpx_candidates.tokens_left); engine stats count the
 *        prefix cache and speculative decoding
 *   2.3  a request's result counts its speculative drafts (lpx_request_result.draft_tokens,
 *        accepted_draft_tokens)
 *   2.4  a request's result says how long it waited for a sequence slot
 *        (lpx_request_result.queue_ms)
 *   2.5  several models per pipeline: the run context's models table (lpx/models.h) leases
 *        each model's engine, loading it when needed; and a JSON record of the run
 *        (lpx_run_context.run_record_json)
 *   2.6  model formats may read directories (a Hugging Face model): the optional
 *        lpx_model_format_api.probe_path; and list their metadata keys (metadata_count,
 *        metadata_key_at)
 *   2.7  per-request LoRA adapters: lpx_request.adapter names one of the model's resident
 *        adapters; a models table lists them (lpx_model_entry.parent) and leases them by
 *        "MODEL:ADAPTER" (lpx_model_lease.adapter)
 *   2.8  queued device steps: quant backends may queue a forward step and complete it later
 *        (lpx_quant_backend_api.model_enqueue, model_wait), and a queued step's rows may take
 *        their tokens from the previous step's picks on the device
 *        (lpx_forward_args.previous_outputs), so step N + 1 is queued before step N is read
 */
#ifndef LPX_VERSION_H
#define LPX_VERSION_H

#define LPX_ABI_MAJOR 2
#define LPX_ABI_MINOR 8

#endif
