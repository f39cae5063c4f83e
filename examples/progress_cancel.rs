//! Follows a long run's progress and stops it from another thread (a UI's Cancel button).
//!
//! `cargo run --release --example progress_cancel`: an all-pairs measure (Spearman's rho)
//! on the bundled digits, run once to the end with progress printed, then cancelled from a
//! second thread at its first progress report; the run ends with `Error::Interrupted`.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use faithful::{Cancel, Error, Evaluator, Spec};

fn main() -> Result<(), Error> {
    let ex = faithful::example_digits();
    let specs: Vec<Spec> = vec!["srho".parse()?];
    let low = &ex.projections[0];

    let last = Arc::new(Mutex::new(String::new()));
    let seen = last.clone();
    let eval = Evaluator::builder(ex.high.clone())
        .progress(move |p| *seen.lock().unwrap() = format!("{}: {}/{}", p.phase, p.done, p.total))
        .build();
    let scores = eval.measure(low, None, &specs)?;
    println!("srho = {:.6} (last progress: {})", scores[0].value("spearman_rho").unwrap(), last.lock().unwrap());

    // The canceller thread sets the flag when the run reports progress, and the run stops at
    // its next check. The callback waits for the flag so that the stop is certain here.
    let cancel = Cancel::new();
    let (ask, asked) = mpsc::channel::<mpsc::Sender<()>>();
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            if let Ok(done) = asked.recv() {
                cancel.request();
                let _ = done.send(());
            }
        })
    };
    let ask = Mutex::new(Some(ask));
    let eval = Evaluator::builder(ex.high)
        .cancel(cancel.clone())
        .progress(move |_| {
            if let Some(ask) = ask.lock().unwrap().take() {
                let (done, wait) = mpsc::channel();
                ask.send(done).expect("canceller listens");
                wait.recv().expect("canceller answers");
            }
        })
        .build();
    let err = eval.measure(low, None, &specs).unwrap_err();
    canceller.join().expect("canceller thread");
    assert!(matches!(err, Error::Interrupted), "{err}");
    println!("cancelled from another thread: {err}");
    Ok(())
}
