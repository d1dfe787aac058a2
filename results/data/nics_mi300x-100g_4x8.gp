set terminal svg size 1300,440 dynamic
set output "results/figures/nics_mi300x-100g_4x8.svg"
set multiplot layout 1,3 title "mi300x-100g 4 x 8: time / lower bound per NIC scenario"
set termoption noenhanced
set logscale y
set yrange [0.9:12]
set ytics ("1" 1, "1.25" 1.25, "1.5" 1.5, "2" 2, "3" 3, "4" 4, "6" 6, "8" 8, "12" 12)
set xtics rotate by -40 font ",8"
set ylabel "time / bound"
set key top right font ",8"
set grid
set title "uniform, 256 MiB per GPU"
plot "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:3:xtic(2) with linespoints title "fast", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:4:xtic(2) with linespoints title "fast_healthy_plan", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:5:xtic(2) with linespoints title "fanout", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:6:xtic(2) with linespoints title "nccl", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:7:xtic(2) with linespoints title "pxn", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:8:xtic(2) with linespoints title "spreadout", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:9:xtic(2) with linespoints title "hier"
set title "zipf, 256 MiB per GPU"
plot "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:3:xtic(2) with linespoints title "fast", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:4:xtic(2) with linespoints title "fast_healthy_plan", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:5:xtic(2) with linespoints title "fanout", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:6:xtic(2) with linespoints title "nccl", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:7:xtic(2) with linespoints title "pxn", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:8:xtic(2) with linespoints title "spreadout", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:9:xtic(2) with linespoints title "hier"
set title "trace, 256 MiB per GPU"
plot "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:3:xtic(2) with linespoints title "fast", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:4:xtic(2) with linespoints title "fast_healthy_plan", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:5:xtic(2) with linespoints title "fanout", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:6:xtic(2) with linespoints title "nccl", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:7:xtic(2) with linespoints title "pxn", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:8:xtic(2) with linespoints title "spreadout", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:9:xtic(2) with linespoints title "hier"
unset multiplot
set terminal pngcairo size 1300,440
set output "results/figures/nics_mi300x-100g_4x8.png"
set multiplot layout 1,3 title "mi300x-100g 4 x 8: time / lower bound per NIC scenario"
set termoption noenhanced
set logscale y
set yrange [0.9:12]
set ytics ("1" 1, "1.25" 1.25, "1.5" 1.5, "2" 2, "3" 3, "4" 4, "6" 6, "8" 8, "12" 12)
set xtics rotate by -40 font ",8"
set ylabel "time / bound"
set key top right font ",8"
set grid
set title "uniform, 256 MiB per GPU"
plot "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:3:xtic(2) with linespoints title "fast", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:4:xtic(2) with linespoints title "fast_healthy_plan", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:5:xtic(2) with linespoints title "fanout", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:6:xtic(2) with linespoints title "nccl", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:7:xtic(2) with linespoints title "pxn", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:8:xtic(2) with linespoints title "spreadout", \
     "results/data/nics_mi300x-100g_4x8_uniform.dat" using 1:9:xtic(2) with linespoints title "hier"
set title "zipf, 256 MiB per GPU"
plot "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:3:xtic(2) with linespoints title "fast", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:4:xtic(2) with linespoints title "fast_healthy_plan", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:5:xtic(2) with linespoints title "fanout", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:6:xtic(2) with linespoints title "nccl", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:7:xtic(2) with linespoints title "pxn", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:8:xtic(2) with linespoints title "spreadout", \
     "results/data/nics_mi300x-100g_4x8_zipf.dat" using 1:9:xtic(2) with linespoints title "hier"
set title "trace, 256 MiB per GPU"
plot "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:3:xtic(2) with linespoints title "fast", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:4:xtic(2) with linespoints title "fast_healthy_plan", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:5:xtic(2) with linespoints title "fanout", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:6:xtic(2) with linespoints title "nccl", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:7:xtic(2) with linespoints title "pxn", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:8:xtic(2) with linespoints title "spreadout", \
     "results/data/nics_mi300x-100g_4x8_trace.dat" using 1:9:xtic(2) with linespoints title "hier"
unset multiplot
