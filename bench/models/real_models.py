"""The real set's architectures as PyTorch modules with seeded random weights (docs/benchmarking.md, "Real
set"): torchvision's and transformers' own classes built from their configs (nothing is downloaded: no
pretrained weights, no tokenizer), and five small modules written here in the shape of deployed models (a
U-Net decoder, a YOLO-style detector, a CRNN, two streaming RNNs). Each entry gives the module, its example
inputs and the ONNX input and output names; make_real.py exports them.

Every builder takes `quick`: True gives a smaller input (and for the transformers fewer layers) of the same
architecture, for checking the pipeline in minutes."""
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class Entry:
    def __init__(self, name, what, module, inputs, input_names, output_names):
        self.name, self.what, self.module = name, what, module
        self.inputs, self.input_names, self.output_names = inputs, input_names, output_names


def randomize_norm_stats(module, gen):
    """What a constructor leaves trivial, made to do arithmetic with seeded values: BatchNorm's mean 0,
    variance 1, scale 1, shift 0 and LayerNorm's scale 1, shift 0 (identities a runtime could get wrong
    unnoticed), a weight initialized to zeros (ViT's classifier head: every output would be 0) and
    ConvNeXt's layer scale of 1e-6 (every block would be nearly the identity; trained ones are ~0.1-1)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm)) and m.weight is not None:
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
            if isinstance(m, (nn.Linear, nn.Conv2d)) and not m.weight.any():
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * m.weight.shape[1] ** -0.5)
        for name, p in module.named_parameters():
            if name.endswith("layer_scale"):
                p.copy_(torch.rand(p.shape, generator=gen) * 0.4 + 0.1)
    return module


def image(gen, size, channels=3):
    return torch.randn(1, channels, size, size, generator=gen)


def vision(name, what, ctor, size, gen):
    module = randomize_norm_stats(ctor(), gen).eval()
    return Entry(name, what, module, (image(gen, size),), ["input"], ["output"])


class SegmentationOut(nn.Module):
    """torchvision's segmentation models return a dict; the exported graph returns its "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def conv_bn_act(cin, cout, k=3, stride=1, act=nn.ReLU):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout), act())


class UNet(nn.Module):
    """A U-Net: 4 encoder levels (two 3x3 Conv+BN+ReLU, 2x2 MaxPool), a bottleneck, 4 decoder levels that
    upsample with a 2x2 stride-2 ConvTranspose, concatenate the skip connection and run two Conv+BN+ReLU;
    a 1x1 Conv to the classes."""

    def __init__(self, base=32, classes=2):
        super().__init__()
        widths = [base, base * 2, base * 4, base * 8]
        self.down, cin = nn.ModuleList(), 3
        for w in widths:
            self.down.append(nn.Sequential(conv_bn_act(cin, w), conv_bn_act(w, w)))
            cin = w
        self.bottom = nn.Sequential(conv_bn_act(cin, cin * 2), conv_bn_act(cin * 2, cin * 2))
        self.up, self.merge, cin = nn.ModuleList(), nn.ModuleList(), cin * 2
        for w in reversed(widths):
            self.up.append(nn.ConvTranspose2d(cin, w, 2, stride=2))
            self.merge.append(nn.Sequential(conv_bn_act(2 * w, w), conv_bn_act(w, w)))
            cin = w
        self.head = nn.Conv2d(cin, classes, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips)):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.head(x)


class C2f(nn.Module):
    """A YOLOv8-style CSP block: 1x1 Conv, Split in two, n bottlenecks on the second half, Concat of every
    intermediate, 1x1 Conv."""

    def __init__(self, cin, cout, n):
        super().__init__()
        self.half = cout // 2
        self.stem = conv_bn_act(cin, cout, 1, act=nn.SiLU)
        self.blocks = nn.ModuleList(nn.Sequential(conv_bn_act(self.half, self.half, act=nn.SiLU),
                                                  conv_bn_act(self.half, self.half, act=nn.SiLU)) for _ in range(n))
        self.out = conv_bn_act((2 + n) * self.half, cout, 1, act=nn.SiLU)

    def forward(self, x):
        parts = list(self.stem(x).split(self.half, dim=1))
        for block in self.blocks:
            parts.append(parts[-1] + block(parts[-1]))
        return self.out(torch.cat(parts, dim=1))


class SPPF(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.stem = conv_bn_act(c, c // 2, 1, act=nn.SiLU)
        self.out = conv_bn_act(c * 2, c, 1, act=nn.SiLU)

    def forward(self, x):
        x = self.stem(x)
        a = F.max_pool2d(x, 5, 1, 2)
        b = F.max_pool2d(a, 5, 1, 2)
        return self.out(torch.cat([x, a, b, F.max_pool2d(b, 5, 1, 2)], dim=1))


class YOLO(nn.Module):
    """A YOLOv8n-shaped detector: Conv+BN+SiLU backbone with C2f blocks and SPPF, a PAN neck (nearest 2x
    upsampling, Concat, stride-2 convs), and per scale a box head (64 = 4 x 16 distribution bins) and a
    class head (80 classes, Sigmoid), concatenated over the three scales into [1, 144, anchors]."""

    def __init__(self, w=16, classes=80):
        super().__init__()
        act = nn.SiLU
        self.b0 = nn.Sequential(conv_bn_act(3, w, stride=2, act=act), conv_bn_act(w, 2 * w, stride=2, act=act),
                                C2f(2 * w, 2 * w, 1))
        self.b1 = nn.Sequential(conv_bn_act(2 * w, 4 * w, stride=2, act=act), C2f(4 * w, 4 * w, 2))  # P3
        self.b2 = nn.Sequential(conv_bn_act(4 * w, 8 * w, stride=2, act=act), C2f(8 * w, 8 * w, 2))  # P4
        self.b3 = nn.Sequential(conv_bn_act(8 * w, 16 * w, stride=2, act=act), C2f(16 * w, 16 * w, 1),
                                SPPF(16 * w))  # P5
        self.n4 = C2f(24 * w, 8 * w, 1)
        self.n3 = C2f(12 * w, 4 * w, 1)
        self.d3 = conv_bn_act(4 * w, 4 * w, stride=2, act=act)
        self.m4 = C2f(12 * w, 8 * w, 1)
        self.d4 = conv_bn_act(8 * w, 8 * w, stride=2, act=act)
        self.m5 = C2f(24 * w, 16 * w, 1)
        self.box = nn.ModuleList(nn.Sequential(conv_bn_act(c, 64, act=act), conv_bn_act(64, 64, act=act),
                                               nn.Conv2d(64, 64, 1)) for c in (4 * w, 8 * w, 16 * w))
        self.cls = nn.ModuleList(nn.Sequential(conv_bn_act(c, 80, act=act), conv_bn_act(80, 80, act=act),
                                               nn.Conv2d(80, classes, 1)) for c in (4 * w, 8 * w, 16 * w))

    def forward(self, x):
        p3 = self.b1(self.b0(x))
        p4 = self.b2(p3)
        p5 = self.b3(p4)
        up = F.interpolate(p5, scale_factor=2.0, mode="nearest")
        t4 = self.n4(torch.cat([up, p4], 1))
        o3 = self.n3(torch.cat([F.interpolate(t4, scale_factor=2.0, mode="nearest"), p3], 1))
        o4 = self.m4(torch.cat([self.d3(o3), t4], 1))
        o5 = self.m5(torch.cat([self.d4(o4), p5], 1))
        heads = [torch.cat([box(o), torch.sigmoid(cls(o))], 1).flatten(2)
                 for o, box, cls in zip((o3, o4, o5), self.box, self.cls)]
        return torch.cat(heads, 2)


class CRNN(nn.Module):
    """Text recognition: a VGG-style CNN (Conv+BN+ReLU, MaxPool, the last pools 2x1 so the width stays a
    sequence) down to height 1, the width as time steps, two bidirectional LSTM layers, a Linear to the
    alphabet and LogSoftmax."""

    def __init__(self, hidden=256, classes=97):
        super().__init__()
        self.cnn = nn.Sequential(conv_bn_act(1, 64), nn.MaxPool2d(2), conv_bn_act(64, 128), nn.MaxPool2d(2),
                                 conv_bn_act(128, 256), conv_bn_act(256, 256), nn.MaxPool2d((2, 1)),
                                 conv_bn_act(256, 512), conv_bn_act(512, 512), nn.MaxPool2d((2, 1)),
                                 conv_bn_act(512, 512, k=1))
        self.rnn = nn.LSTM(512, hidden, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        f = self.cnn(x)  # [N, 512, H/16, W/4]
        f = f.mean(dim=2).permute(2, 0, 1)  # [T, N, 512]
        y, _ = self.rnn(f)
        return F.log_softmax(self.fc(y), dim=-1)


class StreamingGRU(nn.Module):
    """A voice-activity-style streaming model: one chunk of feature frames plus the GRU state carried
    between calls: Linear+ReLU, a 2-layer GRU from the state input, Linear+Sigmoid per frame, the new state
    as the second output."""

    def __init__(self, features=64, hidden=128):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, h):
        y, h_next = self.gru(F.relu(self.inp(x)), h)
        return torch.sigmoid(self.out(y)), h_next


class StreamingLSTM(nn.Module):
    """The same with an LSTM (state inputs h and c), as streaming keyword spotters and denoisers have it."""

    def __init__(self, features=64, hidden=128):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, features)

    def forward(self, x, h, c):
        y, (h_next, c_next) = self.lstm(F.relu(self.inp(x)), (h, c))
        return torch.sigmoid(self.out(y)) * x, h_next, c_next


def tokens(gen, vocab, seq):
    return torch.randint(0, vocab, (1, seq), generator=gen, dtype=torch.int64)


def distilbert(gen, quick):
    from transformers import DistilBertConfig, DistilBertModel
    cfg = DistilBertConfig(n_layers=2 if quick else 6, attn_implementation="eager")
    seq = 32 if quick else 128
    module = FirstOutput(DistilBertModel(cfg).eval()).eval()
    ids = tokens(gen, cfg.vocab_size, seq)
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[0, seq - seq // 8:] = 0  # padding at the end: the mask is exercised
    return Entry("distilbert", f"DistilBERT-base ({cfg.n_layers} layers, hidden 768, 12 heads), sequence {seq}, "
                 "token ids + attention mask (Gather embeddings, attention), transformers config, random init",
                 module, (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state"])


class FirstOutput(nn.Module):
    """A transformers model's first output (the hidden states or the logits) as a plain tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, mask):
        return self.model(input_ids=ids, attention_mask=mask, return_dict=False)[0]


class LogitsOnly(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, mask):
        return self.model(input_ids=ids, attention_mask=mask, use_cache=False, return_dict=False)[0]


def gpt2(gen, quick):
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=2 if quick else 12, attn_implementation="eager", use_cache=False)
    seq = 32 if quick else 128
    module = LogitsOnly(GPT2LMHeadModel(cfg).eval()).eval()
    return Entry("gpt2", f"GPT-2 small ({cfg.n_layer} layers, hidden 768, 12 heads) with its LM head (50257), "
                 f"sequence {seq}, token ids + attention mask, causal attention, no KV cache; transformers config, "
                 "random init", module, (tokens(gen, cfg.vocab_size, seq), torch.ones(1, seq, dtype=torch.int64)),
                 ["input_ids", "attention_mask"], ["logits"])


class EncoderOut(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x, return_dict=False)[0]


def whisper_encoder(gen, quick):
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    frames = 600 if quick else 3000  # 30 s of 10 ms mel frames (the model's fixed window)
    cfg = WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6, encoder_ffn_dim=1536,
                        decoder_layers=4, decoder_attention_heads=6, decoder_ffn_dim=1536, num_mel_bins=80,
                        max_source_positions=frames // 2, attn_implementation="eager")
    module = EncoderOut(WhisperEncoder(cfg).eval()).eval()
    mel = torch.randn(1, 80, frames, generator=gen)
    return Entry("whisper_tiny_encoder", f"Whisper-tiny's encoder (2 Conv1d + GELU, 4 pre-norm layers, d 384, 6 heads), "
                 f"80 mel bins x {frames} frames; transformers config, random init",
                 module, (mel,), ["input_features"], ["last_hidden_state"])


def build_all(quick, seed=16):
    """Every entry, each from its own seed so that adding one does not change the others."""
    import torchvision.models as tv
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large

    def gen(i):
        torch.manual_seed(seed * 100 + i)  # the modules' own initializers
        return torch.Generator().manual_seed(seed * 100 + i)

    size = 64 if quick else 224
    entries = []
    g = gen(1)
    entries.append(vision("mobilenet_v3_large", f"torchvision MobileNetV3-Large, 1x3x{size}x{size} (depthwise, "
                          "HardSwish, HardSigmoid, squeeze-excite)", tv.mobilenet_v3_large, size, g))
    g = gen(2)
    entries.append(vision("efficientnet_b0", f"torchvision EfficientNet-B0, 1x3x{size}x{size} (depthwise, SiLU, "
                          "squeeze-excite)", tv.efficientnet_b0, size, g))
    g = gen(3)
    entries.append(vision("resnet50", f"torchvision ResNet-50, 1x3x{size}x{size} (bottleneck blocks)", tv.resnet50,
                          size, g))
    g = gen(4)
    entries.append(vision("convnext_tiny", f"torchvision ConvNeXt-Tiny, 1x3x{size}x{size} (7x7 depthwise, "
                          "LayerNorm over channels, GELU, layer scale)", tv.convnext_tiny, size, g))
    g = gen(5)
    if quick:
        vit = lambda: tv.VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=128,
                                           mlp_dim=512)
    else:
        vit = tv.vit_b_16
    entries.append(vision("vit_b_16", f"torchvision ViT-B/16, 1x3x{size}x{size}" +
                          (" (2 layers, hidden 128)" if quick else " (12 layers, hidden 768, 12 heads)"), vit, size, g))
    g = gen(6)
    seg = 128 if quick else 512
    module = randomize_norm_stats(SegmentationOut(deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False, num_classes=21)), g).eval()
    entries.append(Entry("deeplabv3_mobilenet_v3", f"torchvision DeepLabV3 on MobileNetV3-Large, 1x3x{seg}x{seg}, "
                         "21 classes (dilated depthwise, ASPP, bilinear Resize)", module, (image(g, seg),), ["input"],
                         ["output"]))
    g = gen(7)
    unet = 64 if quick else 256
    entries.append(Entry("unet", f"U-Net, 4 levels (32..256 channels, bottleneck 512), 2x2/2 ConvTranspose "
                         f"upsampling, skip Concat, 1x3x{unet}x{unet}",
                         randomize_norm_stats(UNet(), g).eval(), (image(g, unet),), ["input"], ["output"]))
    g = gen(8)
    yolo = 128 if quick else 640
    entries.append(Entry("yolo", f"YOLOv8n-shaped detector (Conv+BN+SiLU, C2f Split/Concat, SPPF MaxPool, nearest "
                         f"Resize, 3 heads), 1x3x{yolo}x{yolo}",
                         randomize_norm_stats(YOLO(), g).eval(), (image(g, yolo),), ["images"], ["output"]))
    g = gen(9)
    entries.append(distilbert(g, quick))
    g = gen(10)
    entries.append(gpt2(g, quick))
    g = gen(11)
    entries.append(whisper_encoder(g, quick))
    g = gen(12)
    width = 64 if quick else 256
    entries.append(Entry("crnn", f"CRNN: VGG-style CNN (7 Conv+BN+ReLU, 4 MaxPool) on 1x1x32x{width}, "
                         f"{width // 4} time steps, 2 bidirectional LSTM layers (hidden 256), Linear, LogSoftmax",
                         randomize_norm_stats(CRNN(), g).eval(), (torch.randn(1, 1, 32, width, generator=g),),
                         ["image"], ["log_probs"]))
    g = gen(13)
    frames = 4 if quick else 16
    entries.append(Entry("streaming_gru", f"streaming GRU: a chunk of {frames} frames x 64 features and the state "
                         "[2, 1, 128] in, per-frame probability and the next state out (Linear, 2-layer GRU, Linear)",
                         StreamingGRU().eval(), (torch.randn(1, frames, 64, generator=g),
                                                 torch.randn(2, 1, 128, generator=g) * 0.5),
                         ["x", "h"], ["prob", "h_next"]))
    g = gen(14)
    entries.append(Entry("streaming_lstm", f"streaming LSTM: a chunk of {frames} frames x 64 features and the "
                         "states h, c [2, 1, 128] in, a per-frame mask times the input and the next states out",
                         StreamingLSTM().eval(), (torch.randn(1, frames, 64, generator=g),
                                                  torch.randn(2, 1, 128, generator=g) * 0.5,
                                                  torch.randn(2, 1, 128, generator=g) * 0.5),
                         ["x", "h", "c"], ["mask", "h_next", "c_next"]))
    return entries


def as_numpy(inputs):
    return [np.ascontiguousarray(t.detach().numpy()) for t in inputs]
