//! TLS to the server, with rustls (no system library needed): libpq's `sslmode=prefer` and
//! `require` encrypt without checking the server's certificate (libpq does not check it
//! either in those modes); `verify-ca` and `verify-full` check it against `sslrootcert`.

use super::url::Tls;
use crate::error::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The connector for a store's TLS mode.
pub fn connector(tls: &Tls) -> Result<MakeRustlsConnect> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Internal(format!("TLS: {e}")))?;
    let config = match tls {
        Tls::Verify { root_cert } => {
            let mut roots = rustls::RootCertStore::empty();
            let certs = CertificateDer::pem_file_iter(root_cert)
                .map_err(|e| Error::invalid(format!("sslrootcert {root_cert}: {e}")))?;
            for cert in certs {
                let cert =
                    cert.map_err(|e| Error::invalid(format!("sslrootcert {root_cert}: {e}")))?;
                roots
                    .add(cert)
                    .map_err(|e| Error::invalid(format!("sslrootcert {root_cert}: {e}")))?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Tls::Encrypt { .. } | Tls::Disable => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider())))
            .with_no_client_auth(),
    };
    Ok(MakeRustlsConnect::new(config))
}

/// Encryption without checking who the server is: libpq's `require`.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
