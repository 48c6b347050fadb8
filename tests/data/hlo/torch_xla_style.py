# Writes a training-step forward and loss as PyTorch/XLA dumps it (SyncTensorsGraph, pN.M
# parameters, aten__ op metadata, LayerNorm as batch-norm-training, dropout as rng-bit-generator):
#   gpt2  GPT-2 (pre-LN, tanh GELU, causal mask, tied head); torch_xla_gpt2_step.hlo is `gpt2 2`
#   bert  BERT-style MLM (post-LN, exact GELU through erf, token types, MLM head tied to the token
#         table, BERT-base sizes); torch_xla_bert12.hlo is `bert 12`
# Usage: python3 torch_xla_style.py gpt2|bert LAYERS > out.hlo   (cfp --train adds backward and AdamW)
import sys
MODEL = sys.argv[1] if len(sys.argv) > 1 else "gpt2"
LAYERS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
if MODEL not in ("gpt2", "bert"):
    sys.exit("usage: torch_xla_style.py gpt2|bert LAYERS")
B,S,D,H,V,F,P = (8,16,64,4,128,256,32) if MODEL == "gpt2" else (8,128,768,12,30522,3072,512)
hd = D//H
lines=[]; params=[]; n=[20]
def sh(t,dims):
    if not dims: return f"{t}[]"
    lay=",".join(str(i) for i in reversed(range(len(dims))))
    return f"{t}[{','.join(map(str,dims))}]{{{lay}}}"
types={}
def emit(op, t, dims, operands, attrs="", scope="", tuple_shape=None):
    n[0]+=1
    name=f"{op}.{n[0]}"
    s = tuple_shape if tuple_shape else sh(t,dims)
    ops=", ".join(f"{types[o]} %{o}" for o in operands)
    md = f', metadata={{op_type="{scope.split("/")[-1]}" op_name="{scope}"}}' if scope else ""
    a = (", "+attrs) if attrs else ""
    lines.append(f"  %{name} = {s} {op}({ops}){a}{md}")
    types[name]=s
    return name
def param(t,dims,what):
    i=len(params); name=f"p{i}.{i+1}"
    s=sh(t,dims); types[name]=s
    params.append((name,s))
    lines.append(f"  %{name} = {s} parameter({i}), metadata={{op_type=\"xla__device_data\" op_name=\"{what}\"}}")
    return name
def const(v,t="f32",scope=""):
    n[0]+=1; name=f"constant.{n[0]}"; s=sh(t,[]); types[name]=s
    lines.append(f"  %{name} = {s} constant({v})"); return name
def splat(v,dims,t="f32",scope=""):
    c=const(v,t); return emit("broadcast",t,dims,[c],"dimensions={}",scope)
def bc(x,t,dims,m,scope=""): return emit("broadcast",t,dims,[x],"dimensions={"+",".join(map(str,m))+"}",scope)
def ew(op,a,b,dims,scope,t="f32"): return emit(op,t,dims,[a,b],"",scope)
def reshape(x,t,dims,scope): return emit("reshape",t,dims,[x],"",scope)
def reduce(x,dims_out,red,comp,init,scope):
    c=const(init); return emit("reduce","f32",dims_out,[x,c],"dimensions={"+",".join(map(str,red))+"}, to_apply=%"+comp,scope)

def linear(x2d, rows, fin, fout, scope):
    w=param("f32",[fout,fin],scope+"/weight"); b=param("f32",[fout],scope+"/bias")
    d=emit("dot","f32",[rows,fout],[x2d,w],"lhs_contracting_dims={1}, rhs_contracting_dims={1}",scope+"/aten__addmm")
    return ew("add",d,bc(b,"f32",[rows,fout],[1],scope+"/aten__addmm"),[rows,fout],scope+"/aten__addmm")

def layernorm(x, scope):
    rows=B*S
    r=reshape(x,"f32",[1,rows,D],scope+"/aten__native_layer_norm")
    one=splat(1,[rows]); zero=splat(0,[rows])
    ts=f"({sh('f32',[1,rows,D])}, {sh('f32',[rows])}, {sh('f32',[rows])})"
    bn=emit("batch-norm-training","f32",None,[r,one,zero],"epsilon=1e-05, feature_index=1",scope+"/aten__native_layer_norm",tuple_shape=ts)
    g=emit("get-tuple-element","f32",[1,rows,D],[bn],"index=0",scope+"/aten__native_layer_norm")
    back=reshape(g,"f32",[B,S,D],scope+"/aten__native_layer_norm")
    w=param("f32",[D],scope+"/weight"); b=param("f32",[D],scope+"/bias")
    m=ew("multiply",back,bc(w,"f32",[B,S,D],[2]),[B,S,D],scope+"/aten__native_layer_norm")
    return ew("add",m,bc(b,"f32",[B,S,D],[2]),[B,S,D],scope+"/aten__native_layer_norm")

state=[None]
def dropout(x,dims,scope,p=0.1):
    ts=f"({sh('u64',[2])}, {sh('u32',dims)})"
    rng=emit("rng-bit-generator","u32",None,[state[0]],"algorithm=rng_default",scope+"/aten__bernoulli",tuple_shape=ts)
    state[0]=emit("get-tuple-element","u64",[2],[rng],"index=0",scope+"/aten__bernoulli")
    bits=emit("get-tuple-element","u32",dims,[rng],"index=1",scope+"/aten__bernoulli")
    sh9=emit("shift-right-logical","u32",dims,[bits,splat(9,dims,"u32")],"",scope+"/aten__bernoulli")
    orr=emit("or","u32",dims,[sh9,splat(1065353216,dims,"u32")],"",scope+"/aten__bernoulli")
    fl=emit("bitcast-convert","f32",dims,[orr],"",scope+"/aten__bernoulli")
    u=ew("subtract",fl,splat(1,dims),dims,scope+"/aten__bernoulli")
    keep=emit("compare","pred",dims,[u,splat(p,dims)],"direction=GE",scope+"/aten__bernoulli")
    scaled=ew("multiply",x,splat(1/(1-p),dims),dims,scope+"/aten__mul")
    return emit("select","f32",dims,[keep,scaled,splat(0,dims)],"",scope+"/aten__mul")

def nll_loss(logits,labels,C):
    mx=reduce(logits,[B*S],[1],"MaxComputation.5","-inf",C+"/aten__log_softmax")
    sub=ew("subtract",logits,bc(mx,"f32",[B*S,V],[0]),[B*S,V],C+"/aten__log_softmax")
    se=reduce(emit("exponential","f32",[B*S,V],[sub],"",C+"/aten__log_softmax"),[B*S],[1],"AddComputation.1","0",C+"/aten__log_softmax")
    lse=emit("log","f32",[B*S],[se],"",C+"/aten__log_softmax")
    logp=ew("subtract",sub,bc(lse,"f32",[B*S,V],[0]),[B*S,V],C+"/aten__log_softmax")
    lab=reshape(labels,"s64",[B*S],C+"/aten__view")
    cls=emit("iota","s64",[B*S,V],[],"iota_dimension=1",C+"/aten__nll_loss")
    hot=emit("compare","pred",[B*S,V],[cls,bc(lab,"s64",[B*S,V],[0],C+"/aten__nll_loss")],"direction=EQ",C+"/aten__nll_loss")
    picked=emit("select","f32",[B*S,V],[hot,logp,splat(0,[B*S,V])],"",C+"/aten__nll_loss")
    tot=reduce(picked,[],[0,1],"AddComputation.1","0",C+"/aten__nll_loss")
    return emit("multiply","f32",[],[tot,const(-1.0/(B*S))],"",C+"/aten__nll_loss")
def softmax(sc,A):
    mx=reduce(sc,[B,H,S],[3],"MaxComputation.5","-inf",A+"/aten__softmax")
    e=emit("exponential","f32",[B,H,S,S],[ew("subtract",sc,bc(mx,"f32",[B,H,S,S],[0,1,2]),[B,H,S,S],A+"/aten__softmax")],"",A+"/aten__softmax")
    sm=reduce(e,[B,H,S],[3],"AddComputation.1","0",A+"/aten__softmax")
    return ew("divide",e,bc(sm,"f32",[B,H,S,S],[0,1,2]),[B,H,S,S],A+"/aten__softmax")

if MODEL == "gpt2":
    ids=param("s64",[B,S],"input_ids"); labels=param("s64",[B,S],"labels")
    wte=param("f32",[V,D],"GPT2LMHeadModel[model]/GPT2Model[transformer]/Embedding[wte]/weight")
    wpe=param("f32",[P,D],"GPT2LMHeadModel[model]/GPT2Model[transformer]/Embedding[wpe]/weight")
    state[0]=param("u64",[2],"rng_state")
    T="GPT2LMHeadModel[model]/GPT2Model[transformer]"
    tok=emit("gather","f32",[B,S,D],[wte,ids],"offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,64}, indices_are_sorted=false",T+"/Embedding[wte]/aten__embedding")
    pos_ids=emit("iota","s64",[S],[],"iota_dimension=0",T+"/aten__arange")
    pos=emit("gather","f32",[S,D],[wpe,pos_ids],"offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}, indices_are_sorted=true",T+"/Embedding[wpe]/aten__embedding")
    h=ew("add",tok,bc(pos,"f32",[B,S,D],[1,2],T+"/aten__add"),[B,S,D],T+"/aten__add")
    h=dropout(h,[B,S,D],T+"/Dropout[drop]")
    for layer in range(LAYERS):
        L=T+f"/GPT2Block[h.{layer}]"
        x=layernorm(h,L+"/LayerNorm[ln_1]")
        A=L+"/GPT2Attention[attn]"
        qkv=linear(reshape(x,"f32",[B*S,D],A+"/aten__view"),B*S,D,3*D,A+"/Conv1D[c_attn]")
        qkv=reshape(qkv,"f32",[B,S,3*D],A+"/aten__view")
        heads=[]
        for i,perm in enumerate(([0,2,1,3],[0,2,1,3],[0,2,1,3])):
            sl=emit("slice","f32",[B,S,D],[qkv],f"slice={{[0:{B}], [0:{S}], [{i*D}:{(i+1)*D}]}}",A+"/aten__split")
            r=reshape(sl,"f32",[B,S,H,hd],A+"/aten__view")
            heads.append(emit("transpose","f32",[B,H,S,hd],[r],"dimensions={0,2,1,3}",A+"/aten__permute"))
        q,k,v=heads
        sc=emit("dot","f32",[B,H,S,S],[q,k],"lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}",A+"/aten__matmul")
        sc=ew("multiply",sc,splat(0.25,[B,H,S,S]),[B,H,S,S],A+"/aten__div")
        i0=emit("iota","s64",[S,S],[],"iota_dimension=0",A+"/aten__tril")
        i1=emit("iota","s64",[S,S],[],"iota_dimension=1",A+"/aten__tril")
        causal=emit("compare","pred",[S,S],[i0,i1],"direction=GE",A+"/aten__tril")
        mask=bc(causal,"pred",[B,H,S,S],[2,3],A+"/aten__where")
        sc=emit("select","f32",[B,H,S,S],[mask,sc,splat("-inf",[B,H,S,S])],"",A+"/aten__where")
        pr=softmax(sc,A)
        pr=dropout(pr,[B,H,S,S],A+"/Dropout[attn_dropout]")
        ctx=emit("dot","f32",[B,H,S,hd],[pr,v],"lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}",A+"/aten__matmul")
        ctx=emit("transpose","f32",[B,S,H,hd],[ctx],"dimensions={0,2,1,3}",A+"/aten__permute")
        o=linear(reshape(ctx,"f32",[B*S,D],A+"/aten__view"),B*S,D,D,A+"/Conv1D[c_proj]")
        o=dropout(reshape(o,"f32",[B,S,D],A+"/aten__view"),[B,S,D],A+"/Dropout[resid_dropout]")
        h=ew("add",h,o,[B,S,D],L+"/aten__add")
        x=layernorm(h,L+"/LayerNorm[ln_2]")
        M=L+"/GPT2MLP[mlp]"
        f1=linear(reshape(x,"f32",[B*S,D],M+"/aten__view"),B*S,D,F,M+"/Conv1D[c_fc]")
        G=M+"/NewGELUActivation[act]/aten__gelu"
        cube=ew("multiply",ew("multiply",f1,f1,[B*S,F],G),f1,[B*S,F],G)
        inner=ew("add",f1,ew("multiply",cube,splat(0.044715,[B*S,F]),[B*S,F],G),[B*S,F],G)
        t=emit("tanh","f32",[B*S,F],[ew("multiply",inner,splat(0.7978845608,[B*S,F]),[B*S,F],G)],"",G)
        g=ew("multiply",ew("multiply",f1,splat(0.5,[B*S,F]),[B*S,F],G),ew("add",t,splat(1,[B*S,F]),[B*S,F],G),[B*S,F],G)
        f2=linear(g,B*S,F,D,M+"/Conv1D[c_proj]")
        f2=dropout(reshape(f2,"f32",[B,S,D],M+"/aten__view"),[B,S,D],M+"/Dropout[dropout]")
        h=ew("add",h,f2,[B,S,D],L+"/aten__add")
    x=layernorm(h,T+"/LayerNorm[ln_f]")
    LM="GPT2LMHeadModel[model]/Linear[lm_head]"
    logits=emit("dot","f32",[B*S,V],[reshape(x,"f32",[B*S,D],LM+"/aten__view"),wte],"lhs_contracting_dims={1}, rhs_contracting_dims={1}",LM+"/aten__mm")
    C="GPT2LMHeadModel[model]/CrossEntropyLoss[loss_fct]"
    loss=nll_loss(logits,labels,C)
else:
    ids=param("s64",[B,S],"input_ids"); types_=param("s64",[B,S],"token_type_ids"); labels=param("s64",[B,S],"labels")
    E="BertForMaskedLM[model]/BertModel[bert]/BertEmbeddings[embeddings]"
    wte=param("f32",[V,D],E+"/Embedding[word_embeddings]/weight")
    wpe=param("f32",[P,D],E+"/Embedding[position_embeddings]/weight")
    wtt=param("f32",[2,D],E+"/Embedding[token_type_embeddings]/weight")
    state[0]=param("u64",[2],"rng_state")
    tok=emit("gather","f32",[B,S,D],[wte,ids],f"offset_dims={{2}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=2, slice_sizes={{1,{D}}}, indices_are_sorted=false",E+"/Embedding[word_embeddings]/aten__embedding")
    tt=emit("gather","f32",[B,S,D],[wtt,types_],f"offset_dims={{2}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=2, slice_sizes={{1,{D}}}, indices_are_sorted=false",E+"/Embedding[token_type_embeddings]/aten__embedding")
    pos_ids=emit("iota","s64",[S],[],"iota_dimension=0",E+"/aten__arange")
    pos=emit("gather","f32",[S,D],[wpe,pos_ids],f"offset_dims={{1}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,{D}}}, indices_are_sorted=true",E+"/Embedding[position_embeddings]/aten__embedding")
    h=ew("add",ew("add",tok,tt,[B,S,D],E+"/aten__add"),bc(pos,"f32",[B,S,D],[1,2],E+"/aten__add"),[B,S,D],E+"/aten__add")
    h=layernorm(h,E+"/LayerNorm[LayerNorm]")
    h=dropout(h,[B,S,D],E+"/Dropout[dropout]")
    def gelu(x,dims,G):
        e=emit("erf","f32",dims,[ew("multiply",x,splat(0.7071067811865476,dims),dims,G)],"",G)
        return ew("multiply",ew("multiply",x,splat(0.5,dims),dims,G),ew("add",e,splat(1,dims),dims,G),dims,G)
    for layer in range(LAYERS):
        L=f"BertForMaskedLM[model]/BertModel[bert]/BertEncoder[encoder]/BertLayer[layer.{layer}]"
        A=L+"/BertAttention[attention]/BertSelfAttention[self]"
        x2=reshape(h,"f32",[B*S,D],A+"/aten__view")
        heads=[]
        for nm in ("query","key","value"):
            p=linear(x2,B*S,D,D,A+f"/Linear[{nm}]")
            r=reshape(p,"f32",[B,S,H,hd],A+"/aten__view")
            heads.append(emit("transpose","f32",[B,H,S,hd],[r],"dimensions={0,2,1,3}",A+"/aten__permute"))
        q,k,v=heads
        sc=emit("dot","f32",[B,H,S,S],[q,k],"lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}",A+"/aten__matmul")
        sc=ew("multiply",sc,splat(0.125,[B,H,S,S]),[B,H,S,S],A+"/aten__div")
        pr=softmax(sc,A)
        pr=dropout(pr,[B,H,S,S],A+"/Dropout[dropout]")
        ctx=emit("dot","f32",[B,H,S,hd],[pr,v],"lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}",A+"/aten__matmul")
        ctx=emit("transpose","f32",[B,S,H,hd],[ctx],"dimensions={0,2,1,3}",A+"/aten__permute")
        O=L+"/BertAttention[attention]/BertSelfOutput[output]"
        o=linear(reshape(ctx,"f32",[B*S,D],O+"/aten__view"),B*S,D,D,O+"/Linear[dense]")
        o=dropout(reshape(o,"f32",[B,S,D],O+"/aten__view"),[B,S,D],O+"/Dropout[dropout]")
        h=layernorm(ew("add",o,h,[B,S,D],O+"/aten__add"),O+"/LayerNorm[LayerNorm]")
        I=L+"/BertIntermediate[intermediate]"
        f1=linear(reshape(h,"f32",[B*S,D],I+"/aten__view"),B*S,D,F,I+"/Linear[dense]")
        g=gelu(f1,[B*S,F],I+"/GELUActivation[intermediate_act_fn]/aten__gelu")
        OUT=L+"/BertOutput[output]"
        f2=linear(g,B*S,F,D,OUT+"/Linear[dense]")
        f2=dropout(reshape(f2,"f32",[B,S,D],OUT+"/aten__view"),[B,S,D],OUT+"/Dropout[dropout]")
        h=layernorm(ew("add",f2,h,[B,S,D],OUT+"/aten__add"),OUT+"/LayerNorm[LayerNorm]")
    HD="BertForMaskedLM[model]/BertOnlyMLMHead[cls]/BertLMPredictionHead[predictions]"
    t=linear(reshape(h,"f32",[B*S,D],HD+"/aten__view"),B*S,D,D,HD+"/BertPredictionHeadTransform[transform]/Linear[dense]")
    t=gelu(t,[B*S,D],HD+"/BertPredictionHeadTransform[transform]/GELUActivation[transform_act_fn]/aten__gelu")
    t=layernorm(reshape(t,"f32",[B,S,D],HD+"/aten__view"),HD+"/BertPredictionHeadTransform[transform]/LayerNorm[LayerNorm]")
    bias=param("f32",[V],HD+"/bias")
    LM=HD+"/Linear[decoder]"
    logits=emit("dot","f32",[B*S,V],[reshape(t,"f32",[B*S,D],LM+"/aten__view"),wte],"lhs_contracting_dims={1}, rhs_contracting_dims={1}",LM+"/aten__mm")
    logits=ew("add",logits,bc(bias,"f32",[B*S,V],[1],LM+"/aten__add"),[B*S,V],LM+"/aten__add")
    C="BertForMaskedLM[model]/CrossEntropyLoss[loss_fct]"
    loss=nll_loss(logits,labels,C)
head="""HloModule SyncTensorsGraph.412

%AddComputation.1 (x.2: f32[], y.3: f32[]) -> f32[] {
  %x.2 = f32[] parameter(0)
  %y.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %x.2, f32[] %y.3)
}

%MaxComputation.5 (x.6: f32[], y.7: f32[]) -> f32[] {
  %x.6 = f32[] parameter(0)
  %y.7 = f32[] parameter(1)
  ROOT %maximum.8 = f32[] maximum(f32[] %x.6, f32[] %y.7)
}
"""
sig=", ".join(f"{nm}: {s.split('{')[0]}" for nm,s in params)
out=[head, f"ENTRY %SyncTensorsGraph.412 ({sig}) -> (f32[]) {{"]
out+=lines
out.append(f"  ROOT %tuple.{n[0]+1} = (f32[]) tuple(f32[] %{loss})")
out.append("}")
sys.stdout.write("\n".join(out)+"\n")
