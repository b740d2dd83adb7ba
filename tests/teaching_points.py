"""The C13-L5 design document's teaching points, each with where the lesson page (site/index.html) makes it.

Written from the course's design text for this lesson (not published with the kit; its numbers are also listed
in the kit's spec of seed numbers). Each point names the section of the lesson (its <section id>, or "top" for the
header) and what must be there: record ids the page shows (`records`, as data-prov) and phrases (`text`, matched in
the section's text with whitespace removed). tests/test_teaching_points.py fails when a point leaves the lesson
page: what moves to the lab page (lab.html) is depth, never a point listed here."""

POINTS = [
    # the lead and the question
    {"point": "只看 token/s 会一路把 batch 开满:batch 1 → 58,吞吐 ×35,TPOT 15.5 → 25.2 ms;32K 长 prompt 让所有人等 1.9 s",
     "section": "top", "records": ["scenario.table_batches.0", "frontier.gain_1_to_cap", "frontier.c4096.b1.step_ms",
                                   "frontier.c4096.b58.step_ms", "scenario.prompt_tokens", "timeline.whole_stall_s"]},
    {"point": "所以要分开量:首 token、间隔、吞吐;看分位数,按目标算 goodput;跨模型先换算成字", "section": "top",
     "text": ["拆开量", "分位数", "goodput", "换成字"]},
    {"point": "本课一问:前几课的「更快」(连续批处理与分页、投机解码、量化)是同一个快吗", "section": "top",
     "text": ["本课一问", "连续批处理", "投机解码", "量化", "同一种「快」"]},
    {"point": "这一课先不碰:质量(C14;投机解码不改输出分布)、多机多卡(C10)、成本与定价", "section": "top",
     "text": ["C14", "C13-L3", "C10", "成本与定价"]},
    # from what is known
    {"point": "一次请求在服务端走过的路:分词、排队、prefill、decode 循环、还原;旁路 KV cache", "section": "start",
     "text": ["分词", "排队", "prefill", "decode循环", "还原成文字", "KVcache"]},
    {"point": "贯穿例句:「小明把苹果给了」等「小王」;用户一侧与机房一侧的两种快,屋顶线同一个式子的两面", "section": "start",
     "text": ["小明把苹果给了", "小王", "用户这头", "机房那头", "C13-L1"]},
    # design it yourself
    {"point": "先自己设计:①朴素方案(只报吞吐)②哪里失败③改进;batch 表 1/8/27/58", "section": "design",
     "text": ["①朴素方案", "②", "③改进", "开到最大"],
     "records": ["frontier.c4096.b1.throughput_tok_s", "frontier.c4096.b58.throughput_tok_s", "mem.cap.c4096"]},
    # split the fast
    {"point": "E2E = TTFT + (n − 1)·TPOT,每项可点;吞吐 = 同时解码的请求数 ÷ TPOT;看 p50、p99", "section": "split",
     "text": ["E2E", "TTFT", "TPOT", "整机吞吐=同时decode的请求数÷TPOT", "p50", "p99"]},
    {"point": "延迟–吞吐前沿与 TPOT 目标:20 ms → 27 个、约 1,357 token/s(不是 58 个、2,304);30 ms 能开满、每用户约 40 token/s;32K 只放约 10 个",
     "section": "split", "records": ["slo.20ms.max_batch", "slo.20ms.throughput_tok_s", "scenario.try_tpot_slo_ms.1",
                                     "slo.30ms.per_user_tok_s", "mem.cap.c32768", "scenario.try_context_tokens.0"],
     "text": ["延迟–吞吐前沿"]},
    {"point": "满足目标的吞吐就是 goodput 的思路", "section": "split", "text": ["goodput的思路"]},
    {"point": "本课一问的回答:前几课的招数(量化、KV 量化、投机解码、分页)各动了哪个数、付了哪个数(只算速度)", "section": "split",
     "text": ["各买到哪一种「快」", "招式×数字", "只算速度"],
     "records": ["readout.technique.weights_fp8.tpot_b1_ms", "readout.technique.speculative.ttft_s",
                 "readout.technique.reserved.max_batch", "readout.technique.kv_fp8.max_batch"]},
    {"point": "DistServe 的 goodput:至少 90% 请求达标时每卡能承受的最大请求率;同目标多服务的倍数或目标收紧的倍数(自报;数在 config/cited.json,由 records 核对)",
     "section": "load", "records": ["cited.distserve.slo_attainment_pct", "cited.distserve.more_requests_x",
                                    "cited.distserve.tighter_slo_x"]},
    # long prompt
    {"point": "长 prompt 来了:整段、分块 prefill(Sarathi-Serve)、P/D 分离(DistServe);DeepSeek-V3 prefill 32 卡、decode 320 卡",
     "section": "long-prompt", "text": ["整段prefill", "分块prefill", "Sarathi-Serve", "P/D分离", "DistServe", "C13-L2"],
     "records": ["cited.deepseek_v3.prefill_gpus", "cited.deepseek_v3.decode_gpus"]},
    {"point": "时间线三件事:57 个老用户等约 1.91 s;分块后每步约 36 ms、TTFT 约 2.11 s;块 8,192;prompt 131,072 整段一步超 10 s",
     "section": "long-prompt",
      "records": ["timeline.running_users", "timeline.whole_stall_s", "timeline.chunk512.max_step_ms",
                                           "timeline.chunk512.ttft_s", "scenario.try_chunk_tokens.0",
                                           "scenario.prompt_tokens.max", "timeline.p131072.whole_step_s"]},
    {"point": "Kimi K3:短请求 < 2K、长到 1M,成本差约三个数量级;按类别分预算做准入;400K 前缀只新增 4K,前缀缓存命中与否",
     "section": "long-prompt", "records": ["cited.kimi.short_request_tokens", "cited.kimi.long_request_tokens",
                                           "cited.kimi.cost_orders_of_magnitude", "cited.kimi.shared_prefix_tokens",
                                           "cited.kimi.new_tokens"], "text": ["准入", "前缀缓存"]},
    {"point": "Sarathi-Serve 对 vLLM 的自报倍数(数在 config/cited.json,由 records 核对)", "section": "long-prompt",
     "records": ["cited.sarathi.mistral7b_x", "cited.sarathi.falcon180b_x"]},
    # tokens
    {"point": "token/s 能跨模型比吗:209 字中文,Qwen3.8 106 个 token,GPT-2 461 个", "section": "tokens",
     "records": ["cited.course.passage_chars", "cited.course.qwen_tokens", "cited.course.gpt2_tokens"], "text": ["C1"]},
    # our measurement
    {"point": "项目实测:3.7M 模型 batch 1 贪心有无 KV cache;课程 M5 Max 上只快一点(自报倍数在 config/cited.json);屋顶线在这个规模不成立 → 实验课",
     "section": "measured", "records": ["cited.course.m5max_kv_speedup_lo", "cited.course.m5max_kv_speedup_hi"],
     "text": ["屋顶线在这个规模不成立", "实验课"]},
    # misconceptions
    {"point": "误解一:吞吐高,每个用户就快(batch 58,×35,15.5 → 25.2 ms)", "section": "misconceptions",
     "text": ["「吞吐上去了,每个用户自然就快。」"], "records": ["frontier.gain_1_to_cap"]},
    {"point": "误解二:平均延迟好大家就满意(一次整段 prefill 卡住 1.9 s;看 p99,按目标算达标比例)", "section": "misconceptions",
     "text": ["「平均延迟好看,大家就都满意。」", "p99"], "records": ["timeline.whole_stall_s"]},
    {"point": "误解三:token/s 可跨模型直接比(GPT-2 是 Qwen3.8 的 4.3 倍)", "section": "misconceptions",
     "text": ["「token/s可以直接跨模型比。」"], "records": ["course.gpt2_to_anchor_ratio"]},
    {"point": "误解四:首 token 慢是因为模型大(还看 prompt 长度、排队、前缀缓存、prefill 与 decode 抢卡)", "section": "misconceptions",
     "text": ["「首token慢,说明模型太大。」", "前缀缓存", "排了几个人"]},
    # evolution map
    {"point": "演进地图 11 代,第 9 代「按 TTFT/TPOT/goodput 调度:分块 prefill、P/D 分离」是你在这里;解决了 / 卡在(C14)",
     "section": "map", "text": ["KVcache", "连续批处理", "PagedAttention", "投机解码", "MTP", "量化", "分块prefill、P/D分离",
                                "你在这里", "采样", "GQA、MLA、线性注意力", "解决了", "卡在", "C14", "章首页"],
     "records": ["cited.distserve.more_requests_x"]},
    # numbers' provenance
    {"point": "数字口径:锚点字节与时间是 H100 上的屋顶线上界(不是实测),由 anchor-model.json 现算;论文数字为自报",
     "section": "sources", "text": ["上界", "anchor-model.json", "不是实测", "自报"]},
    # evidence three questions
    {"point": "证据三问:①解决什么 ②数学上为什么(分解是定义,取舍可算)③实验上呢(Sarathi、DistServe 的自报倍数,数在 config/cited.json;本课的模拟器对真实引擎的实测核对)",
     "section": "evidence", "text": ["它解决什么问题?", "数学上为什么成立?", "实验上呢?", "定义", "真实引擎"],
     "records": ["cited.sarathi.mistral7b_x", "cited.sarathi.falcon180b_x", "cited.distserve.more_requests_x"]},
    # one sentence, stop here, next gap
    {"point": "一句话:快有好几种,互相拉扯;看分位数、按 SLO 算 goodput,token/s 先对齐 tokenizer", "section": "summary",
     "text": ["「快」不止一种", "分位数", "SLO", "goodput", "tokenizer"]},
    {"point": "先停在这里 → 实验课;再深一层:How to Scale Your Model 推理一章与 DistServe 论文", "section": "summary",
     "text": ["可以停在这里", "实验课", "HowtoScaleYourModel", "DistServe论文"]},
    {"point": "下一个缺口:质量还剩多少、分数能信吗 → C14 评测", "section": "summary", "text": ["下一个缺口", "C14评测"]},
    {"point": "你可能会问(真实提问记录)", "section": "questions", "text": ["你可能会问"]},
]
