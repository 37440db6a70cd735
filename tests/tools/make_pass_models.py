#!/usr/bin/env python3
"""Writes tests/fixtures/passes/block_opset13.onnx and block_opset17.onnx: a small CNN stem and one
transformer encoder block, written the way PyTorch exports them before opset 17, so that every O1 pass
has something to do (Identity/Dropout, Shape/Constant folding, a dead node, Conv+BatchNorm twice, a
residual Conv+Add+Relu, two decomposed LayerNorms, masked scaled-dot-product attention, exact GELU).
test_pass_pipeline.c prepares them at O0 and O1 and compares the outputs. Deterministic (seeded).
Run with Debian's python3-onnx: /usr/bin/python3 tests/tools/make_pass_models.py"""
import os
import numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "passes")
rng=np.random.default_rng(0)
inits=[]; nodes=[]
def c(name, arr):
    inits.append(nh.from_array(np.asarray(arr).astype(np.float32), name)); return name
def ci(name, arr):
    inits.append(nh.from_array(np.asarray(arr).astype(np.int64), name)); return name
N=nodes.append
N(h.make_node('Conv',['X',c('W1',rng.normal(size=(4,3,3,3))),c('B1',rng.normal(size=4))],['c1'],pads=[1,1,1,1]))
N(h.make_node('BatchNormalization',['c1',c('s1',rng.uniform(.5,1.5,4)),c('b1',rng.normal(size=4)),c('m1',rng.normal(size=4)),c('v1',rng.uniform(.5,2,4))],['bn1'],epsilon=1e-5))
N(h.make_node('Relu',['bn1'],['r1']))
N(h.make_node('Conv',['r1',c('W2',rng.normal(size=(4,4,3,3))*.3)],['c2'],pads=[1,1,1,1]))
N(h.make_node('BatchNormalization',['c2',c('s2',rng.uniform(.5,1.5,4)),c('b2',rng.normal(size=4)),c('m2',rng.normal(size=4)),c('v2',rng.uniform(.5,2,4))],['bn2']))
N(h.make_node('Add',['bn2','r1'],['res']))
N(h.make_node('Relu',['res'],['r2']))
N(h.make_node('Identity',['r2'],['r2i']))
N(h.make_node('Dropout',['r2i'],['r2d']))
N(h.make_node('Shape',['r2d'],['shp']))
N(h.make_node('Constant',[],['idx'],value=nh.from_array(np.array([0,1],dtype=np.int64))))
N(h.make_node('Gather',['shp','idx'],['bc']))
N(h.make_node('Constant',[],['m1c'],value=nh.from_array(np.array([-1],dtype=np.int64))))
N(h.make_node('Concat',['bc','m1c'],['newshape'],axis=0))
N(h.make_node('Reshape',['r2d','newshape'],['seq0']))
N(h.make_node('Transpose',['seq0'],['seq'],perm=[0,2,1]))
N(h.make_node('MatMul',['seq',c('Wup',rng.normal(size=(4,16))*.5)],['x']))
def layernorm(x, pre):
    N(h.make_node('ReduceMean',[x],[pre+'m'],axes=[-1]))
    N(h.make_node('Sub',[x,pre+'m'],[pre+'d']))
    N(h.make_node('Pow',[pre+'d',c(pre+'two',2.0)],[pre+'sq']))
    N(h.make_node('ReduceMean',[pre+'sq'],[pre+'v'],axes=[-1]))
    N(h.make_node('Add',[pre+'v',c(pre+'eps',1e-5)],[pre+'ve']))
    N(h.make_node('Sqrt',[pre+'ve'],[pre+'s']))
    N(h.make_node('Div',[pre+'d',pre+'s'],[pre+'n']))
    N(h.make_node('Mul',[pre+'n',c(pre+'g',rng.uniform(.5,1.5,16))],[pre+'gm']))
    N(h.make_node('Add',[pre+'gm',c(pre+'b',rng.normal(size=16)*.1)],[pre+'out']))
    return pre+'out'
ln=layernorm('x','ln1_')
def proj(x,name):
    N(h.make_node('MatMul',[x,c(name+'W',rng.normal(size=(16,16))*.3)],[name+'p']))
    N(h.make_node('Add',[name+'p',c(name+'B',rng.normal(size=16)*.1)],[name+'pb']))
    N(h.make_node('Reshape',[name+'pb',ci(name+'shape',[1,64,2,8])],[name+'r']))
    N(h.make_node('Transpose',[name+'r'],[name+'t'],perm=[0,2,1,3]))
    return name+'t'
q=proj(ln,'q_'); k=proj(ln,'k_'); v=proj(ln,'v_')
N(h.make_node('Transpose',[k],['kT'],perm=[0,1,3,2]))
N(h.make_node('MatMul',[q,'kT'],['sc']))
N(h.make_node('Constant',[],['dk'],value=nh.from_array(np.array(8.0,dtype=np.float32))))
N(h.make_node('Sqrt',['dk'],['sdk']))
N(h.make_node('Div',['sc','sdk'],['sc2']))
N(h.make_node('Add',['sc2',c('mask',np.triu(np.full((64,64),-1e4),1))],['sc3']))
N(h.make_node('Softmax',['sc3'],['pr'],axis=-1))
N(h.make_node('MatMul',['pr',v],['ctx']))
N(h.make_node('Transpose',['ctx'],['ctxT'],perm=[0,2,1,3]))
N(h.make_node('Reshape',['ctxT',ci('merge',[1,64,16])],['att']))
N(h.make_node('Add',['att',ln],['h1']))
ln2=layernorm('h1','ln2_')
N(h.make_node('MatMul',[ln2,c('Wf1',rng.normal(size=(16,32))*.3)],['f1']))
N(h.make_node('Add',['f1',c('Bf1',rng.normal(size=32)*.1)],['f1b']))
N(h.make_node('Div',['f1b',c('sq2',1.4142135381698608)],['g0']))
N(h.make_node('Erf',['g0'],['g1']))
N(h.make_node('Add',['g1',c('one',1.0)],['g2']))
N(h.make_node('Mul',['f1b','g2'],['g3']))
N(h.make_node('Mul',['g3',c('half',0.5)],['g4']))
N(h.make_node('MatMul',['g4',c('Wf2',rng.normal(size=(32,16))*.3)],['f2']))
N(h.make_node('Add',['f2','h1'],['Y0']))
N(h.make_node('Tanh',['f2'],['unused']))
N(h.make_node('Identity',['Y0'],['Y']))
g = h.make_graph(nodes,'demo',[h.make_tensor_value_info('X',T.FLOAT,[1,3,8,8])],[h.make_tensor_value_info('Y',T.FLOAT,[1,64,16])],inits)
m=h.make_model(g,opset_imports=[h.make_opsetid('',13)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(OUT, 'block_opset13.onnx'))
m.opset_import[0].version=17
onnx.save(m, os.path.join(OUT, 'block_opset17.onnx'))
