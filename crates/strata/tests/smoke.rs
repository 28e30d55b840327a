use strata::prelude::*;

#[test]
fn saxpy_and_reduce() {
    let dev = Device::from_spec("cpu").unwrap();
    let q = Queue::new(&dev).unwrap();
    let k = Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })
    .unwrap();
    println!("{}", k.ir_text());
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let y = Buffer::from_slice(&q, &vec![1.0f32; n]).unwrap();
    q.launch(&k, NdRange::covering(n, 64), args![2.0f32, &x, &y])
        .unwrap();
    let out = q.read(&y).unwrap();
    for i in 0..n {
        assert_eq!(out[i], 2.0 * i as f32 + 1.0);
    }

    let red = Kernel::build("sum", |k| {
        let x = k.read::<u32>("x");
        let out = k.read_write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 64);
        let l = local_id(0);
        let i = global_id(0);
        tile.set(l, select(i.lt(x.len()), x.at(i.min(x.len() - 1u32)), 0u32));
        barrier();
        let mut s = 32u32;
        while s > 0 {
            if_(l.lt(s), || tile.set(l, tile.at(l) + tile.at(l + s)));
            barrier();
            s /= 2;
        }
        if_(l.eq(0u32), || {
            out.atomic_add(0u32, tile.at(0u32));
        });
        k.gather_add(select(i.lt(x.len()), x.at(i.min(x.len() - 1u32)), 0u32));
    })
    .unwrap();
    let xs: Vec<u32> = (0..1000).collect();
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let out = Buffer::<u32>::new(&dev, 1).unwrap();
    let run = q
        .launch(&red, NdRange::covering(1000, 64), args![&x, &out])
        .unwrap();
    assert_eq!(q.read(&out).unwrap()[0], 499500);
    assert_eq!(run.gather::<u32>(0).unwrap().get().unwrap(), 499500);
}
