"""gluon.model_zoo.vision: every architecture builds, initializes and runs, with MXNet
1.9's output shape, parameter counts and parameter names; get_model (pretrained=True:
test_pretrained.py).

Parameter counts, two conventions:

- ``total``: MXNet's ``sum(p.data().size for p in net.collect_params().values())``,
  which includes BatchNorm's running_mean/running_var (and the gamma/beta that
  ``BatchNorm(scale=False, center=False)`` keeps with grad_req 'null');
- ``trainable``: the parameters with grad_req != 'null', the convention of
  torchvision's ``sum(p.numel() for p in model.parameters())``.

The numbers are MXNet's architectures at their standard input (224x224, 299x299 for
Inception V3). Where torchvision has the same architecture its published count equals
``trainable`` (AlexNet, VGG and VGG-BN, DenseNet, SqueezeNet, ResNet-18/34 V1, Inception
V3 without the auxiliary classifier). MXNet differs from torchvision in three places,
all checked here: ResNet-50/101/152 V1 have biases on the two 1x1 convolutions of each
bottleneck (torchvision + sum of (channels / 4 + channels) over the bottlenecks), the
first MobileNet V2 bottleneck keeps its 1x1 expansion convolution (+ 32 * 32 + 2 * 32)
and the V2 classifier is a 1x1 convolution without bias (- 1000). MobileNet 1.0 equals
Keras' MobileNet (4,253,864 total, 4,231,976 trainable). The ResNet V2 and the other
MobileNet widths were counted by hand from the layer specifications.
"""
import numpy
import pytest

from core import autograd, initializer, nd
from gluon import HybridBlock, nn
from gluon.block import NameManager
from gluon.model_zoo import vision

# name: (input size of the test, total, trainable); total and trainable as above.
EXPECTED = {
    "resnet18_v1": (32, 11_699_112, 11_689_512),
    "resnet34_v1": (32, 21_814_696, 21_797_672),
    "resnet50_v1": (32, 25_629_032, 25_575_912),
    "resnet101_v1": (32, 44_695_144, 44_589_800),
    "resnet152_v1": (32, 60_404_072, 60_252_648),
    "resnet18_v2": (32, 11_695_796, 11_687_848),
    "resnet34_v2": (32, 21_811_380, 21_796_008),
    "resnet50_v2": (32, 25_595_060, 25_549_480),
    "resnet101_v2": (32, 44_639_412, 44_541_608),
    "resnet152_v2": (32, 60_329_140, 60_185_256),
    "vgg11": (32, 132_863_336, 132_863_336),
    "vgg13": (32, 133_047_848, 133_047_848),
    "vgg16": (32, 138_357_544, 138_357_544),
    "vgg19": (32, 143_667_240, 143_667_240),
    "vgg11_bn": (32, 132_874_344, 132_868_840),
    "vgg13_bn": (32, 133_059_624, 133_053_736),
    "vgg16_bn": (32, 138_374_440, 138_365_992),
    "vgg19_bn": (32, 143_689_256, 143_678_248),
    "alexnet": (224, 61_100_840, 61_100_840),
    "densenet121": (221, 8_062_504, 7_978_856),
    "densenet161": (221, 28_900_936, 28_681_000),
    "densenet169": (221, 14_307_880, 14_149_480),
    "densenet201": (221, 20_242_984, 20_013_928),
    "squeezenet1.0": (213, 1_248_424, 1_248_424),
    "squeezenet1.1": (209, 1_235_496, 1_235_496),
    "inceptionv3": (299, 23_869_000, 23_834_568),
    "mobilenet1.0": (32, 4_253_864, 4_231_976),
    "mobilenet0.75": (32, 2_601_976, 2_585_560),
    "mobilenet0.5": (32, 1_342_536, 1_331_592),
    "mobilenet0.25": (32, 475_544, 470_072),
    "mobilenetv2_1.0": (32, 3_539_136, 3_504_960),
    "mobilenetv2_0.75": (32, 2_653_864, 2_627_592),
    "mobilenetv2_0.5": (32, 1_983_104, 1_964_736),
    "mobilenetv2_0.25": (32, 1_526_856, 1_516_392),
}

# VGG's first Dense layer takes the flattened 512 x (H/32) x (W/32) features, so its
# weight has 4096 x 512 x 49 entries at 224x224 and 4096 x 512 at 32x32; all other
# parameters are independent of the input size (checked at 224 by test_vgg_224).
VGG_DENSE_SHRINK_AT_32 = 4096 * 512 * (7 * 7 - 1)

# torchvision's published counts (weights meta "num_params"), for the cross-check.
TORCHVISION = {
    "resnet18_v1": 11_689_512, "resnet34_v1": 21_797_672, "resnet50_v1": 25_557_032,
    "resnet101_v1": 44_549_160, "resnet152_v1": 60_192_808,
    "vgg11": 132_863_336, "vgg13": 133_047_848, "vgg16": 138_357_544,
    "vgg19": 143_667_240, "vgg11_bn": 132_868_840, "vgg13_bn": 133_053_736,
    "vgg16_bn": 138_365_992, "vgg19_bn": 143_678_248,
    "alexnet": 61_100_840, "squeezenet1.0": 1_248_424, "squeezenet1.1": 1_235_496,
    "densenet121": 7_978_856, "densenet161": 28_681_000, "densenet169": 14_149_480,
    "densenet201": 20_013_928, "mobilenetv2_1.0": 3_504_872,
    # 27,161,264 with the auxiliary classifier, which MXNet's Inception3 does not have
    "inceptionv3": 27_161_264 - 3_326_696,
}


def _counts(net):
    params = net.collect_params().values()
    total = sum(p.data().size for p in params)
    trainable = sum(p.data().size for p in params if p.grad_req != "null")
    return total, trainable


def _bottleneck_biases(layers, channels):
    return sum(n * (c // 4 + c) for n, c in zip(layers, channels))


def test_expected_counts_agree_with_torchvision():
    """The table's trainable counts against torchvision's, with MXNet's known
    differences."""
    differences = {"mobilenetv2_1.0": 32 * 32 + 2 * 32 - 1000}
    for depth, (_, layers, channels) in vision.resnet.resnet_spec.items():
        if depth >= 50:
            differences[f"resnet{depth}_v1"] = _bottleneck_biases(layers, channels[1:])
    for name, count in TORCHVISION.items():
        assert EXPECTED[name][2] == count + differences.get(name, 0), name


def test_model_table_is_complete():
    assert set(vision._models) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_forward_and_parameter_count(name):
    size, total, trainable = EXPECTED[name]
    net = vision.get_model(name)
    assert isinstance(net, HybridBlock)
    assert list(net._children) == ["features", "output"]
    net.initialize()
    out = net(nd.random.uniform(shape=(1, 3, size, size)))
    assert out.shape == (1, 1000)
    assert numpy.isfinite(out.asnumpy()).all()
    if name.startswith("vgg"):
        total -= VGG_DENSE_SHRINK_AT_32
        trainable -= VGG_DENSE_SHRINK_AT_32
    assert _counts(net) == (total, trainable)


@pytest.mark.slow
def test_vgg_224():
    """VGG at its standard input size: MXNet's count without any adjustment."""
    net = vision.vgg11()
    net.initialize()
    assert net(nd.zeros((1, 3, 224, 224))).shape == (1, 1000)
    assert _counts(net) == EXPECTED["vgg11"][1:]


@pytest.mark.parametrize(("name", "size"), [("resnet18_v2", 32), ("squeezenet1.1", 209),
                                            ("mobilenet0.25", 32), ("alexnet", 63)])
def test_classes(name, size):
    net = vision.get_model(name, classes=10)
    net.initialize()
    assert net(nd.zeros((2, 3, size, size))).shape == (2, 10)


def test_resnet_thumbnail():
    net = vision.resnet18_v1(thumbnail=True, classes=10)
    stem = net.features[0]
    assert isinstance(stem, nn.Conv2D) and isinstance(net.features[1], nn.HybridSequential)
    net.initialize()
    assert net(nd.zeros((1, 3, 32, 32))).shape == (1, 10)
    assert stem.weight.shape == (64, 3, 3, 3)


def test_mxnet_parameter_names():
    """MXNet 1.9's names (those of its pretrained parameter files) and structural names."""
    with NameManager():
        resnet = vision.resnet18_v1()
        mobilenet = vision.mobilenet_v2_1_0()
        inception = vision.inception_v3()
        densenet = vision.densenet121()
    names = list(resnet.collect_params())
    assert len(names) == 102
    assert names[:2] == ["resnetv10_conv0_weight", "resnetv10_batchnorm0_gamma"]
    assert "resnetv10_stage1_conv0_weight" in names
    assert "resnetv10_stage2_batchnorm4_running_var" in names
    assert names[-2:] == ["resnetv10_dense0_weight", "resnetv10_dense0_bias"]
    assert "mobilenetv20_features_linearbottleneck0_conv0_weight" in mobilenet.collect_params()
    assert list(mobilenet.collect_params())[-1] == "mobilenetv20_output_pred_weight"
    assert "inception30_A1_conv0_weight" in inception.collect_params()
    assert "inception30_E2_batchnorm8_running_var" in inception.collect_params()
    assert "densenet0_stage4_conv31_weight" in densenet.collect_params()
    structural = list(resnet._collect_params_with_prefix())
    assert structural[:2] == ["features.0.weight", "features.1.gamma"]
    assert "features.4.0.body.0.weight" in structural
    assert "features.5.0.downsample.0.weight" in structural


def test_save_load_parameters(tmp_path):
    """The way to use trained weights: load_parameters from a local file."""
    net = vision.mobilenet_v2_0_25(classes=10)
    net.initialize(initializer.Xavier())
    x = nd.random.uniform(shape=(2, 3, 32, 32))
    expected = net(x).asnumpy()
    path = str(tmp_path / "mobilenetv2_0.25.params")
    net.save_parameters(path)
    other = vision.get_model("mobilenetv2_0.25", classes=10)
    other.load_parameters(path)
    numpy.testing.assert_allclose(other(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("block", "layers", "channels", "version"), [
    (vision.BasicBlockV1, [1, 1], [8, 8, 16], 1),
    (vision.BottleneckV1, [1, 1], [8, 16, 32], 1),
    (vision.BasicBlockV2, [1, 1], [8, 8, 16], 2),
    (vision.BottleneckV2, [1, 1], [8, 16, 32], 2),
])
def test_residual_blocks_backward_and_hybridize(block, layers, channels, version):
    """Small ResNets of each block type: every trainable parameter gets a gradient, and
    hybridized results are the same."""
    resnet = vision.ResNetV1 if version == 1 else vision.ResNetV2
    net = resnet(block, layers, channels, classes=10, thumbnail=True)
    net.initialize(initializer.Xavier())
    x = nd.random.uniform(shape=(2, 3, 8, 8))
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    for name, p in net.collect_params().items():
        if p.grad_req == "null":
            continue
        grad = p.grad().asnumpy()
        assert numpy.isfinite(grad).all(), name
        assert numpy.abs(grad).sum() > 0, name
    expected = net(x).asnumpy()
    net.hybridize()
    numpy.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_get_model_is_case_insensitive():
    assert isinstance(vision.get_model("ResNet18_V1"), vision.ResNetV1)
    assert isinstance(vision.get_model("MobileNetV2_0.5"), vision.MobileNetV2)


def test_get_model_unknown_name_lists_the_models():
    with pytest.raises(ValueError, match="Model resnet_18 is not supported") as err:
        vision.get_model("ResNet_18")
    for name in vision._models:
        assert f"\t{name}\n" in str(err.value) + "\n"


@pytest.mark.parametrize(("make", "match"), [
    (lambda: vision.get_resnet(3, 18), "invalid ResNet version 3"),
    (lambda: vision.get_resnet(1, 20), "invalid number of layers 20"),
    (lambda: vision.ResNetV1(vision.BasicBlockV1, [2, 2], [64, 64]), "one more entry"),
    (lambda: vision.get_vgg(12), "invalid number of layers 12"),
    (lambda: vision.VGG([1, 1], [64]), "same length"),
    (lambda: vision.get_densenet(100), "invalid number of layers 100"),
    (lambda: vision.SqueezeNet("1.2"), "Unsupported SqueezeNet version"),
])
def test_invalid_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_input_too_small_fails():
    """The fixed final poolings of DenseNet (7x7) need at least 221x221 images."""
    net = vision.densenet121()
    net.initialize()
    with pytest.raises(ValueError):
        net(nd.zeros((1, 3, 32, 32)))
