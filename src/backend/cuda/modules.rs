//! Kernel modules of one CUDA context: each kernel file is compiled (or read from the disk cache,
//! [`super::cache`]) the first time one of its entry points is needed, loaded once, and kept for the
//! life of the backend.

use super::{cache, nvrtc, sources};
use crate::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How a module was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModuleOrigin {
    /// Read from the disk cache.
    Cached,
    /// Compiled by NVRTC in this process.
    Compiled,
}

/// A loaded module and where it came from.
struct Loaded {
    module: Arc<CudaModule>,
    origin: ModuleOrigin,
    log: String,
}

/// The modules of one context.
pub struct Modules {
    ctx: Arc<CudaContext>,
    arch: String,
    nvrtc_version: (i32, i32),
    loaded: Mutex<HashMap<&'static str, Loaded>>,
}

impl Modules {
    /// Modules for `ctx`, compiled for `arch` (`sm_XY`) by NVRTC `nvrtc_version`.
    pub fn new(ctx: Arc<CudaContext>, arch: String, nvrtc_version: (i32, i32)) -> Self {
        Modules {
            ctx,
            arch,
            nvrtc_version,
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// The kernel entry point `entry`, loading its module if needed.
    pub fn function(&self, entry: &str) -> Result<CudaFunction> {
        let file = sources::file_of(entry)
            .ok_or_else(|| Error::Cuda(format!("no kernel file defines entry point {entry}")))?;
        let module = self.module(file)?;
        module
            .load_function(entry)
            .map_err(|e| Error::Cuda(format!("loading kernel {entry}: {e:?}")))
    }

    /// Load (compile or read from cache) every kernel file; returns each module's origin and
    /// NVRTC log (empty for cached modules).
    pub fn load_all(&self) -> Result<Vec<(&'static str, ModuleOrigin, String)>> {
        let mut out = Vec::new();
        for f in sources::ALL.iter() {
            self.module(f)?;
            let map = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
            let l = &map[f.name];
            out.push((f.name, l.origin, l.log.clone()));
        }
        Ok(out)
    }

    fn module(&self, file: &'static sources::KernelFile) -> Result<Arc<CudaModule>> {
        let mut map = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = map.get(file.name) {
            return Ok(l.module.clone());
        }
        let source = file.full_source();
        let options = nvrtc::options(&self.arch);
        let key = cache::cache_key(&source, &options, &self.arch, self.nvrtc_version);
        let path = cache::cache_dir().map(|d| cache::cache_path(&d, file.name, &key));
        // A cached module that the driver refuses is treated like a corrupt file: compile again.
        if let Some(bytes) = path.as_deref().and_then(cache::load) {
            if let Ok(module) = self.ctx.load_module(Ptx::from_binary(bytes)) {
                map.insert(
                    file.name,
                    Loaded {
                        module: module.clone(),
                        origin: ModuleOrigin::Cached,
                        log: String::new(),
                    },
                );
                return Ok(module);
            }
        }
        let compiled = nvrtc::compile(file.name, &source, &options)?;
        let module = self
            .ctx
            .load_module(Ptx::from_binary(compiled.cubin.clone()))
            .map_err(|e| Error::Cuda(format!("loading module {}: {e:?}", file.name)))?;
        if let Some(p) = &path {
            if let Err(e) = cache::store(p, &compiled.cubin) {
                eprintln!("warning: could not cache kernel module {}: {e}", file.name);
            }
        }
        map.insert(
            file.name,
            Loaded {
                module: module.clone(),
                origin: ModuleOrigin::Compiled,
                log: compiled.log,
            },
        );
        Ok(module)
    }
}
