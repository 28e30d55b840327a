//! Pictures for the examples: PNG files written and read with the `png` crate, the colours of
//! a Mandelbrot picture (`mandelbrot`, `showcase`), a generated colour test picture, and the
//! argument parsing the field examples (`rof`, `upside_down`, `cielab`) share. Included with
//! `#[path]` by each example; not every example uses every item.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

/// A picture's size (width, height) and its RGBA pixels, row by row.
pub type Picture = ((usize, usize), Vec<[f32; 4]>);

/// Command-line options of the field examples.
pub struct Options {
    pub device: String,
    pub size: (usize, usize),
    pub input: Option<PathBuf>,
    pub out: PathBuf,
    pub iters: usize,
}

/// Parses `--device SPEC --size WxH --input FILE.png --out DIR --iters N`; `out` defaults to
/// `target/NAME` (created if missing).
pub fn parse_args(name: &str, default_size: (usize, usize)) -> BoxResult<Options> {
    let mut o = Options {
        device: "best".into(),
        size: default_size,
        input: None,
        out: PathBuf::from("target").join(name),
        iters: 100,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--device" => o.device = value()?,
            "--size" => {
                let v = value()?;
                let (w, h) = v.split_once('x').ok_or("--size is WxH, e.g. 640x480")?;
                o.size = (w.parse()?, h.parse()?);
            }
            "--input" => o.input = Some(PathBuf::from(value()?)),
            "--out" => o.out = PathBuf::from(value()?),
            "--iters" => o.iters = value()?.parse()?,
            _ => {
                return Err(format!(
                    "unknown argument {a}; use --device SPEC, --size WxH, --input FILE.png, --out DIR, --iters N"
                )
                .into())
            }
        }
    }
    if o.size.0 == 0 || o.size.1 == 0 {
        return Err("the size must not be zero".into());
    }
    std::fs::create_dir_all(&o.out)?;
    Ok(o)
}

/// RGB bytes for Mandelbrot iteration counts: black inside the set (`max_iter`), a smooth
/// palette outside.
pub fn iteration_colours(iters: &[u32], max_iter: u32) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(iters.len() * 3);
    for &it in iters {
        if it >= max_iter {
            rgb.extend([0, 0, 0]);
            continue;
        }
        let t = (it as f32 / max_iter as f32).sqrt();
        let u = 1.0 - t;
        let c = |v: f32| (v.clamp(0.0, 1.0) * 255.0) as u8;
        rgb.extend([
            c(9.0 * u * t * t * t),
            c(15.0 * u * u * t * t),
            c(8.5 * u * u * u * t),
        ]);
    }
    rgb
}

/// Writes 8-bit pixels (`channels` 1: grey, 3: RGB, 4: RGBA) as a PNG.
pub fn write_png(path: &Path, (w, h): (usize, usize), channels: usize, px: &[u8]) -> BoxResult<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, w as u32, h as u32);
    enc.set_color(match channels {
        1 => png::ColorType::Grayscale,
        3 => png::ColorType::Rgb,
        _ => png::ColorType::Rgba,
    });
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header()?;
    writer.write_image_data(px)?;
    writer.finish()?;
    Ok(())
}

/// Reads an 8-bit PNG as RGBA colours in `[0, 1]` (grey and RGB are expanded, alpha 1).
pub fn read_png_rgba(path: &Path) -> BoxResult<Picture> {
    let mut decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path)?));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size().ok_or("PNG too large")?];
    let info = reader.next_frame(&mut buf)?;
    let (w, h) = (info.width as usize, info.height as usize);
    let ch = match info.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err("indexed PNGs are not expanded".into()),
    };
    let px = (0..w * h)
        .map(|i| {
            let p = &buf[i * ch..i * ch + ch];
            let f = |v: u8| v as f32 / 255.0;
            match ch {
                1 | 2 => [f(p[0]), f(p[0]), f(p[0]), 1.0],
                3 => [f(p[0]), f(p[1]), f(p[2]), 1.0],
                _ => [f(p[0]), f(p[1]), f(p[2]), f(p[3])],
            }
        })
        .collect();
    Ok(((w, h), px))
}

/// A colour test picture: a hue sweep left to right, darker downwards, with a white disc and
/// a black square (flat regions and sharp edges, which denoising should keep).
pub fn test_picture((w, h): (usize, usize)) -> Vec<[f32; 4]> {
    let mut px = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let (u, v) = (x as f32 / w as f32, y as f32 / h as f32);
            let hue = u * 6.0;
            let k = |n: f32| {
                let t = (n + hue) % 6.0;
                1.0 - (t.min(4.0 - t).clamp(0.0, 1.0))
            };
            let shade = 1.0 - 0.6 * v;
            let mut c = [k(5.0) * shade, k(3.0) * shade, k(1.0) * shade, 1.0];
            let (dx, dy) = (u - 0.3, v - 0.5);
            if dx * dx + dy * dy < 0.04 {
                c = [1.0, 1.0, 1.0, 1.0];
            }
            if (0.6..0.85).contains(&u) && (0.25..0.6).contains(&v) {
                c = [0.0, 0.0, 0.0, 1.0];
            }
            px.push(c);
        }
    }
    px
}

/// `[0, 1]` to a byte, rounded, clamped.
pub fn byte(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// A path in the system's temporary folder, unique to this process.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
